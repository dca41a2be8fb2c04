// A frame's previews (issue 36): a git push to another branch, or a pull request against the
// frame's branch, makes a preview frame once they are on; one is removed after its time to
// live without a push. The console shows them and, for members, turns them on or off and sets
// the time to live. The env overrides are write-only: their names show here, values never.
import { fp, type Schemas, useList, useWrite } from '../api.ts';
import { type Frame, frameKey, params } from '../data/frames.ts';
import { FramePreviewList } from './FramePreviewList.tsx';
import { Field, formValues, Problem, Submit } from './Form.tsx';

type Settings = NonNullable<Schemas['UpdateFrameBody']['previews']>;
const PATH = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/previews';

function PreviewsForm({ frame }: { frame: Frame }) {
  // No If-Match: only what changed is sent, so a change made meanwhile elsewhere stays.
  const save = useWrite(
    (previews: Settings) => fp().updateFrame(frame, { previews }),
    [frameKey(frame)],
  );
  const now = frame.previews;
  return (
    <>
      <form
        className="row"
        // A new version of the frame gives the form its new values.
        key={frame.version}
        onSubmit={(e) => {
          const v = formValues(e);
          const body: Settings = {};
          const enabled = v.enabled === 'on';
          if (enabled !== now.enabled) body.enabled = enabled;
          if (Number(v.ttl_days) !== now.ttl_days) body.ttl_days = Number(v.ttl_days);
          if (Object.keys(body).length) save.mutate(body);
        }}
      >
        <div className="field">
          <label>
            <input type="checkbox" name="enabled" defaultChecked={now.enabled} /> Make previews
          </label>
        </div>
        <Field
          label="Days to live"
          name="ttl_days"
          type="number"
          min={1}
          max={90}
          required
          defaultValue={now.ttl_days}
        />
        <Submit busy={save.isPending}>Save previews</Submit>
      </form>
      {/* The API names `previews.ttl_days`, not the field's name: shown below the form. */}
      <Problem error={save.error} />
    </>
  );
}

export function FramePreviews({ frame, canEdit }: { frame: Frame; canEdit: boolean }) {
  // Under the frame's key: its events (a preview made, deployed, removed) read them again.
  const list = useList([...frameKey(frame), 'previews'], (cursor) =>
    fp().api.GET(PATH, { params: { ...params(frame).params, query: { cursor } } }),
  );
  const p = frame.previews;
  const days = `${p.ttl_days} day${p.ttl_days === 1 ? '' : 's'}`;
  return (
    <section aria-labelledby="previews-title">
      <h2 id="previews-title">Previews</h2>
      <dl className="facts">
        <dt>Previews</dt>
        <dd id="previews-state">{p.enabled ? 'on' : 'off'}</dd>
        <dt>Time to live</dt>
        <dd>{days} without a push</dd>
        <dt>Env overrides</dt>
        <dd>{p.env_keys.length ? p.env_keys.join(', ') : 'none'}</dd>
      </dl>
      {canEdit && <PreviewsForm frame={frame} />}
      <FramePreviewList list={list} branch={frame.git_repository_branch} />
    </section>
  );
}
