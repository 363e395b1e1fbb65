import { useCallback, useEffect, useState } from 'react';

export type Route =
  | { readonly name: 'list' }
  | { readonly name: 'new' }
  | { readonly name: 'session'; readonly sessionId: string }
  | { readonly name: 'diff'; readonly sessionId: string };

export function parseRoute(pathname: string): Route {
  const session = /^\/sessions\/(ses_[0-9a-f]{32})(\/diff)?\/?$/.exec(pathname);
  if (session) return { name: session[2] === undefined ? 'session' : 'diff', sessionId: session[1]! };
  if (pathname === '/new' || pathname === '/new/') return { name: 'new' };
  return { name: 'list' };
}

export function sessionPath(sessionId: string): string {
  return `/sessions/${sessionId}`;
}

/** The session's changes against its worktree's base. */
export function sessionDiffPath(sessionId: string): string {
  return `/sessions/${sessionId}/diff`;
}

/** The route from the address bar, and a navigate that uses history (the daemon answers any app path with the app). */
export function useRoute(): readonly [Route, (path: string) => void] {
  const [route, setRoute] = useState<Route>(() => parseRoute(window.location.pathname));
  useEffect(() => {
    const onPopState = () => setRoute(parseRoute(window.location.pathname));
    window.addEventListener('popstate', onPopState);
    return () => window.removeEventListener('popstate', onPopState);
  }, []);
  const navigate = useCallback((path: string) => {
    if (path !== window.location.pathname) window.history.pushState(null, '', path);
    setRoute(parseRoute(path));
  }, []);
  return [route, navigate] as const;
}
