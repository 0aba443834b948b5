// The signed-in layout: a banner with the merchant and "Sign out", the main navigation, the page.
import { useState, type ReactNode } from 'react';
import { useQuery } from 'urql';
import { Link, useLocation } from 'wouter';
import { graphql } from '../graphql.ts';
import type { Session } from '../session.ts';

// The banner's name follows a rename on the settings page (the mutation refetches this query).
const BannerQuery = graphql(`
  query DashboardBanner { merchant { id name } }
`);

const NAV: [string, string][] = [
  ['/', 'Overview'],
  ['/payments', 'Payments'],
  ['/customers', 'Customers'],
  ['/invoices', 'Invoices'],
  ['/credit-notes', 'Credit notes'],
  ['/subscriptions', 'Subscriptions'],
  ['/plans', 'Plans'],
  ['/coupons', 'Coupons'],
  ['/tax-rates', 'Tax rates'],
  ['/wallets', 'Wallets'],
  ['/events', 'Events'],
  ['/webhooks', 'Webhooks'],
  ['/test-clock', 'Test clock'],
  ['/settings', 'Settings'],
];

export function Layout({ session, onSignOut, children }: { session: Session; onSignOut: () => Promise<void>; children: ReactNode }) {
  const [location] = useLocation();
  const [signingOut, setSigningOut] = useState(false);
  const [banner] = useQuery({ query: BannerQuery });
  return (
    <div className="layout">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="banner">
        <span className="brand">open-billing</span>
        <span className="merchant" data-testid="merchant-name">
          {banner.data?.merchant.name ?? session.merchant.name}
          {session.merchant.mode === 'test' && <span className="mode">Test mode</span>}
        </span>
        <span className="user muted">{session.user.email}</span>
        <button
          type="button"
          className="secondary"
          disabled={signingOut}
          onClick={() => {
            setSigningOut(true);
            void onSignOut().finally(() => setSigningOut(false));
          }}
        >
          Sign out
        </button>
      </header>
      <nav className="nav" aria-label="Main">
        <ul>
          {NAV.map(([href, label]) => {
            const current = href === '/' ? location === '/' || location === '' : location === href || location.startsWith(href + '/');
            return (
              <li key={href}>
                <Link href={href} aria-current={current ? 'page' : undefined}>
                  {label}
                </Link>
              </li>
            );
          })}
        </ul>
      </nav>
      <main id="main" className="main">
        {children}
      </main>
    </div>
  );
}
