// A frame's settings: repository, branch, port, health check and scale (replicas). Members may
// change them; the PATCH carries the version read (If-Match), so a change made meanwhile by
// someone else is refused (412) instead of overwritten. Git changes wait for a deploy.
import { fp, useWrite, type Schemas } from '../api.ts';
import { type Frame, frameKey } from '../data/frames.ts';
import { Field, formValues, Problem, Submit } from './Form.tsx';

type Update = Schemas['UpdateFrameBody'];
const TEXT = [
  'name',
  'git_repository_owner',
  'git_repository_name',
  'git_repository_branch',
] as const;
const NUMBERS = ['port', 'replica_count'] as const;

export function FrameSettings({ frame, canEdit }: { frame: Frame; canEdit: boolean }) {
  const save = useWrite(
    (body: Update) => fp().updateFrame(frame, body, { ifMatch: `"${frame.id}.v${frame.version}"` }),
    [frameKey(frame)],
  );
  if (!canEdit)
    return (
      <section aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <dl className="facts">
          <dt>Repository</dt>
          <dd>
            {frame.git_repository_owner}/{frame.git_repository_name}@{frame.git_repository_branch}
          </dd>
          <dt>Port</dt>
          <dd>{frame.port}</dd>
          <dt>Health check</dt>
          <dd>{frame.health_check_path}</dd>
          <dt>Replicas</dt>
          <dd>{frame.replica_count}</dd>
        </dl>
      </section>
    );
  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <form
        className="row"
        // A new version of the frame gives the form its new values.
        key={frame.version}
        onSubmit={(e) => {
          const v = formValues(e);
          const body: Update = {};
          for (const k of TEXT) if (v[k] !== frame[k]) body[k] = v[k];
          for (const k of NUMBERS) if (Number(v[k]) !== frame[k]) body[k] = Number(v[k]);
          if (v.health_check_path !== frame.health_check_path)
            body.health_check_path = v.health_check_path;
          if (Object.keys(body).length) save.mutate(body);
        }}
      >
        <Field label="Name" name="name" defaultValue={frame.name} error={save.error} />
        <Field
          label="Git owner"
          name="git_repository_owner"
          defaultValue={frame.git_repository_owner}
          error={save.error}
        />
        <Field
          label="Repository"
          name="git_repository_name"
          defaultValue={frame.git_repository_name}
          error={save.error}
        />
        <Field
          label="Branch"
          name="git_repository_branch"
          defaultValue={frame.git_repository_branch}
          error={save.error}
        />
        <Field
          label="Port"
          name="port"
          type="number"
          defaultValue={frame.port}
          error={save.error}
        />
        <Field
          label="Health check path"
          name="health_check_path"
          defaultValue={frame.health_check_path}
          error={save.error}
        />
        <Field
          label="Replicas"
          name="replica_count"
          type="number"
          min={0}
          defaultValue={frame.replica_count}
          error={save.error}
        />
        <Submit busy={save.isPending}>Save settings</Submit>
      </form>
      <Problem error={save.error} fields={[...TEXT, ...NUMBERS, 'health_check_path']} />
    </section>
  );
}
