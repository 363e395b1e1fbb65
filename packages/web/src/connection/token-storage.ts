// The token lives in this tab's sessionStorage only: never in the URL (it would reach history,
// logs and referrers), never in localStorage (it would outlive the tab and reach every tab).
const key = 'tether.token';

export function readStoredToken(): string | null {
  try {
    return sessionStorage.getItem(key);
  } catch {
    return null;
  }
}

export function storeToken(token: string): void {
  try {
    sessionStorage.setItem(key, token);
  } catch {
    // Storage refused (private mode, quota): the token then lasts as long as the page.
  }
}

export function forgetStoredToken(): void {
  try {
    sessionStorage.removeItem(key);
  } catch {
    // Nothing stored.
  }
}
