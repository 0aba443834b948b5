import { useState, type FormEvent } from 'react';
import { Field, FormError } from '../components/ui.tsx';
import { signIn, type Session } from '../session.ts';

export function SignInPage({ notice, onSignedIn }: { notice?: string | undefined; onSignedIn: (s: Session) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const result = await signIn(String(form.get('email')), String(form.get('password')));
      if ('session' in result) onSignedIn(result.session);
      else setError(result.error);
    } catch {
      setError('The service could not be reached. Try again.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="centered sign-in">
      <h1>Sign in to your dashboard</h1>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit} className="card">
        <Field label="Email">{(p) => <input {...p} name="email" type="email" autoComplete="username" required autoFocus />}</Field>
        <Field label="Password">{(p) => <input {...p} name="password" type="password" autoComplete="current-password" required />}</Field>
        <FormError message={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p className="muted small">
        No account? Create one with <code>npm run cli -- user create</code> (see the README).
      </p>
    </main>
  );
}
