// The dashboard session (server: /dashboard/api/session, a cookie set HttpOnly and SameSite=Strict).
export interface Session {
  user: { id: string; email: string };
  merchant: { id: string; name: string; mode: string };
}

const SESSION_URL = '/dashboard/api/session';

/** The signed-in session, or null when signed out. */
export async function loadSession(): Promise<Session | null> {
  const res = await fetch(SESSION_URL, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (res.status === 401 || res.status === 404) return null;
  if (!res.ok) throw new Error(`The session could not be checked (HTTP ${res.status}).`);
  // Signed out is a 200 with {"signed_in": false}: no failed request in the console.
  const body = (await res.json()) as Session & { signed_in?: boolean };
  return body.signed_in === false ? null : body;
}

export async function signIn(email: string, password: string): Promise<{ session: Session } | { error: string }> {
  const res = await fetch(SESSION_URL, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (res.ok) return { session: (await res.json()) as Session };
  if (res.status === 429) {
    // The API's message speaks of the Retry-After header; a person gets the seconds.
    const seconds = Number(res.headers.get('retry-after'));
    return { error: `Too many sign-in attempts. Try again in ${Number.isFinite(seconds) && seconds > 0 ? `${Math.ceil(seconds)} second${Math.ceil(seconds) === 1 ? '' : 's'}` : 'a minute'}.` };
  }
  let message = 'Invalid email or password.';
  try {
    const body = (await res.json()) as { error?: { message?: string } };
    if (body.error?.message) message = body.error.message;
  } catch {
    /* not JSON */
  }
  return { error: message };
}

export async function signOut(): Promise<void> {
  await fetch(SESSION_URL, { method: 'DELETE', credentials: 'same-origin' });
}
