// The first page after signing in: whether the address still needs proving, the invitations
// waiting for it, and the way to projects, teams and organizations.
import { Link } from 'react-router';
import { fp, useMe, useList, useWrite } from '../api.ts';
import { Problem } from '../components/Form.tsx';

function Verification() {
  const resend = useWrite(() => fp().call(fp().api.POST('/v2/user/verification-email')));
  return (
    <section className="notice" aria-labelledby="verify-title">
      <h2 id="verify-title">Confirm your e-mail address</h2>
      <p>Until you follow the link we e-mailed, invitations to your address are not listed here.</p>
      {resend.isSuccess ? (
        <p role="status">A new link is on its way to {resend.data.email}.</p>
      ) : (
        <button
          type="button"
          className="secondary"
          onClick={() => resend.mutate(undefined)}
          disabled={resend.isPending}
        >
          Send a new link
        </button>
      )}
      <Problem error={resend.error} />
    </section>
  );
}

function Invitations() {
  const list = useList(['user-invitations'], (cursor) =>
    fp().api.GET('/v2/user/invitations', { params: { query: { cursor } } }),
  );
  if (!list.data?.length) return null;
  return (
    <section aria-labelledby="inv-title">
      <h2 id="inv-title">Invitations for you</h2>
      <p className="muted">Open the link in the invitation e-mail to accept or decline it.</p>
      <ul className="list">
        {list.data.map((i) => (
          <li key={i.id}>
            <strong>{i.team.name}</strong> ({i.kind === 'org' ? 'organization' : 'team'}) as{' '}
            {i.role}, until {new Date(i.expires_at).toLocaleDateString()}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function Home() {
  const me = useMe();
  return (
    <>
      <h1>Welcome{me.data ? `, ${me.data.name}` : ''}</h1>
      {me.data && !me.data.email_verified && <Verification />}
      <Invitations />
      <ul className="tiles">
        <li>
          <Link to="/console/projects">Projects</Link>
          <span className="muted">Spaces, frames, sharing and access</span>
        </li>
        <li>
          <Link to="/console/teams">Teams</Link>
          <span className="muted">Members, roles and invitations</span>
        </li>
        <li>
          <Link to="/console/orgs">Organizations</Link>
          <span className="muted">Members, their role on its projects, invitations</span>
        </li>
        <li>
          <Link to="/console/account">Account</Link>
          <span className="muted">Personal tokens and sessions</span>
        </li>
      </ul>
    </>
  );
}
