// The first page after signing in: whether the address still needs proving, the invitations
// waiting for it (answered here), the caller's frames across projects and the newest activity,
// or, for someone with nothing yet, the first step.
import { Link } from 'react-router';
import { fp, type Schemas, useMe, useList, useWrite } from '../api.ts';
import { ActivityFeed, FramesOverview } from '../components/Dashboard.tsx';
import { Problem } from '../components/Form.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { ORG, TEAM } from '../data/groups.ts';
import { PROJECTS, useProjects } from '../data/projects.ts';

type Invitation = Schemas['InvitationForUser'];
const MINE = ['user-invitations'];

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

/** Accepting or declining by id: the list shows a proven address's invitations only. */
function useAnswer(answer: 'accept' | 'decline') {
  const path = `/v2/user/invitations/{invitation_id}/${answer}` as const;
  return useWrite(
    (i: Invitation) =>
      fp().call(fp().api.POST(path, { params: { path: { invitation_id: i.id } } })),
    [MINE, TEAM.listKey, ORG.listKey, PROJECTS],
  );
}

function Invitations() {
  const list = useList(MINE, (cursor) =>
    fp().api.GET('/v2/user/invitations', { params: { query: { cursor } } }),
  );
  const accept = useAnswer('accept');
  const decline = useAnswer('decline');
  const joined = accept.variables && accept.isSuccess ? accept.variables : undefined;
  const busy = accept.isPending || decline.isPending;
  if (!list.data?.length && !joined) return null;
  return (
    <section aria-labelledby="inv-title">
      <h2 id="inv-title">Invitations for you</h2>
      {joined && (
        <p role="status">
          You joined{' '}
          <Link to={`/console/${joined.kind === 'org' ? 'orgs' : 'teams'}/${joined.team.id}`}>
            {joined.team.name}
          </Link>{' '}
          as {joined.role}.
        </p>
      )}
      <Problem error={accept.error ?? decline.error} />
      <ul className="list">
        {(list.data ?? []).map((i) => (
          <li key={i.id} className="actions">
            <span>
              <strong>{i.team.name}</strong> ({i.kind === 'org' ? 'organization' : 'team'}) as{' '}
              {i.role}, until {new Date(i.expires_at).toLocaleDateString()}
            </span>
            <button
              type="button"
              className="primary"
              disabled={busy}
              onClick={() => accept.mutate(i)}
            >
              Accept
            </button>
            <button type="button" disabled={busy} onClick={() => decline.mutate(i)}>
              Decline
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** For someone with no project yet: what to do first. */
function FirstSteps() {
  return (
    <section aria-labelledby="start-title">
      <h2 id="start-title">Get started</h2>
      <ol className="steps">
        <li>
          <Link className="button primary" to="/console/projects">
            Create your first project
          </Link>
          <span className="muted">A project holds spaces, and a space holds your frames.</span>
        </li>
        <li>
          In its <strong>default</strong> space, create a frame from a Git repository: Frameplane
          builds it and gives it an address.
        </li>
        <li>
          Working with others? <Link to="/console/teams">Create a team</Link> and share the project
          with it, or accept an invitation when one comes.
        </li>
      </ol>
    </section>
  );
}

export function Home() {
  const me = useMe();
  const projects = useProjects();
  return (
    <>
      <h1>Welcome{me.data ? `, ${me.data.name}` : ''}</h1>
      {me.data && !me.data.email_verified && <Verification />}
      <Invitations />
      <Loaded query={projects}>
        {(list) => (
          <>
            {list.length === 0 ? <FirstSteps /> : <FramesOverview projects={list} />}
            <ActivityFeed projects={list} me={me.data?.id} />
          </>
        )}
      </Loaded>
    </>
  );
}
