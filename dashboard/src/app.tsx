// The app: the session decides between the sign-in page and the signed-in layout; client routes
// live under /dashboard (the server answers every /dashboard/* with index.html).
import { useCallback, useEffect, useMemo, useState } from 'react';
import { Provider } from 'urql';
import { Route, Router, Switch } from 'wouter';
import { createClient } from './client.ts';
import { Layout } from './components/layout.tsx';
import { Loading } from './components/ui.tsx';
import { loadSession, signOut, type Session } from './session.ts';
import { SignInPage } from './pages/sign-in.tsx';
import { PaymentsPage, PaymentPage } from './pages/payments.tsx';
import { CustomersPage, CustomerPage } from './pages/customers.tsx';
import { EventsPage, EventPage } from './pages/events.tsx';
import { WebhooksPage, WebhookEndpointPage } from './pages/webhooks.tsx';
import { TestClockPage } from './pages/test-clock.tsx';
import { InvoicesPage, InvoicePage } from './pages/invoices.tsx';
import { CreditNotesPage } from './pages/credit-notes.tsx';
import { CouponsPage } from './pages/coupons.tsx';
import { TaxRatesPage } from './pages/tax-rates.tsx';
import { PlansPage } from './pages/plans.tsx';
import { WalletsPage, WalletPage } from './pages/wallets.tsx';
import { SubscriptionsPage, SubscriptionPage, NewSubscriptionPage } from './pages/subscriptions.tsx';
import { NotFoundPage } from './pages/not-found.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { SettingsPage } from './pages/settings.tsx';

type State = { kind: 'loading' } | { kind: 'signed-out'; notice?: string } | { kind: 'signed-in'; session: Session } | { kind: 'error'; message: string };

export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    loadSession().then(
      (session) => setState(session ? { kind: 'signed-in', session } : { kind: 'signed-out' }),
      (e: Error) => setState({ kind: 'error', message: e.message }),
    );
  }, []);

  const expired = useCallback(() => setState({ kind: 'signed-out', notice: 'Your session has ended. Sign in again.' }), []);
  const onSignOut = useCallback(async () => {
    await signOut();
    setState({ kind: 'signed-out' });
  }, []);
  // A new client (and cache) per session: nothing of one merchant's data survives a sign-out.
  const client = useMemo(() => (state.kind === 'signed-in' ? createClient(expired) : null), [state.kind === 'signed-in' ? state.session.user.id : null, expired]);

  return (
    <Router base="/dashboard">
      {state.kind === 'loading' && <Loading />}
      {state.kind === 'error' && (
        <main className="centered">
          <h1>Dashboard unavailable</h1>
          <p role="alert">{state.message}</p>
        </main>
      )}
      {state.kind === 'signed-out' && <SignInPage notice={state.notice} onSignedIn={(session) => setState({ kind: 'signed-in', session })} />}
      {state.kind === 'signed-in' && client && (
        <Provider value={client}>
          <Layout session={state.session} onSignOut={onSignOut}>
            <Switch>
              <Route path="/" component={OverviewPage} />
              <Route path="/payments" component={PaymentsPage} />
              <Route path="/payments/:id">{(p) => <PaymentPage id={p.id} />}</Route>
              <Route path="/customers" component={CustomersPage} />
              <Route path="/customers/:id">{(p) => <CustomerPage id={p.id} mode={state.session.merchant.mode} />}</Route>
              <Route path="/events" component={EventsPage} />
              <Route path="/events/:id">{(p) => <EventPage id={p.id} />}</Route>
              <Route path="/webhooks" component={WebhooksPage} />
              <Route path="/webhooks/:id">{(p) => <WebhookEndpointPage id={p.id} />}</Route>
              <Route path="/test-clock">{() => <TestClockPage mode={state.session.merchant.mode} />}</Route>
              <Route path="/invoices" component={InvoicesPage} />
              <Route path="/invoices/:id">{(p) => <InvoicePage id={p.id} />}</Route>
              <Route path="/credit-notes" component={CreditNotesPage} />
              <Route path="/subscriptions" component={SubscriptionsPage} />
              <Route path="/subscriptions/new" component={NewSubscriptionPage} />
              <Route path="/subscriptions/:id">{(p) => <SubscriptionPage id={p.id} />}</Route>
              <Route path="/plans" component={PlansPage} />
              <Route path="/coupons" component={CouponsPage} />
              <Route path="/tax-rates" component={TaxRatesPage} />
              <Route path="/wallets" component={WalletsPage} />
              <Route path="/wallets/:id">{(p) => <WalletPage id={p.id} />}</Route>
              <Route path="/settings" component={SettingsPage} />
              <Route component={NotFoundPage} />
            </Switch>
          </Layout>
        </Provider>
      )}
    </Router>
  );
}
