// The frame around every signed-in page: the brand, the navigation, who is signed in and the
// sign-out button. Signed out, it sends the visitor to the sign-in page and back afterwards.
import { useEffect, useRef } from 'react';
import { Link, Navigate, NavLink, Outlet, useLocation } from 'react-router';
import { fp, queryClient, useMe, useWrite } from '../api.ts';
import { setToken, useToken } from '../session.ts';

export function Layout() {
  const token = useToken();
  const location = useLocation();
  const me = useMe();
  const main = useRef<HTMLElement>(null);
  // A new page moves focus to its content, so keyboard and screen-reader users start there
  // (not on the link they left), as a full page load would.
  const first = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the path is what triggers it.
  useEffect(() => {
    if (first.current) first.current = false;
    else main.current?.focus();
  }, [location.pathname]);
  const signOut = useWrite(async () => {
    // Ends the session on the service; a token it no longer knows is signed out all the same.
    await fp()
      .call(fp().api.POST('/v2/auth/logout'))
      .catch(() => {});
  });
  if (!token) {
    const next = location.pathname + location.search;
    return <Navigate to={`/console/sign-in?next=${encodeURIComponent(next)}`} replace />;
  }
  return (
    <div className="app">
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="top">
        <Link to="/console" className="brand">
          Frameplane
        </Link>
        <nav aria-label="Main">
          <NavLink to="/console/projects">Projects</NavLink>
          <NavLink to="/console/teams">Teams</NavLink>
          <NavLink to="/console/orgs">Orgs</NavLink>
          <NavLink to="/console/account">Account</NavLink>
        </nav>
        <div className="who">
          {/* Cut with an ellipsis where it does not fit (a phone); the title holds it whole. */}
          <span id="signed-in-as" title={me.data?.email}>
            {me.data?.email}
          </span>
          <button
            type="button"
            className="secondary"
            disabled={signOut.isPending}
            onClick={() =>
              signOut.mutate(undefined, {
                onSettled: () => {
                  setToken(null);
                  queryClient.clear();
                },
              })
            }
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="content" tabIndex={-1} ref={main}>
        <Outlet />
      </main>
    </div>
  );
}
