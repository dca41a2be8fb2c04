// A frame's domains (added, verified by a DNS TXT record, routed by a CNAME record at the
// frame's hostname, removed) and volumes (added, removed). Everyone who reaches the project
// sees them; admins change them.
import { fp, useList, useWrite } from '../api.ts';
import { type FrameRef, frameKey, params } from '../data/frames.ts';
import { ConfirmButton } from './Confirm.tsx';
import { Field, formValues, Problem, Submit } from './Form.tsx';
import { Loaded } from './Loaded.tsx';

const FRAME = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}';
const pathOf = <E extends Record<string, string>>(f: FrameRef, extra: E) => ({
  params: { path: { ...params(f).params.path, ...extra } },
});

export function FrameDomains({
  frame,
  hostname,
  canManage,
}: {
  frame: FrameRef;
  /** The frame's own hostname: where a domain's CNAME points (each domain says it too). */
  hostname?: string;
  canManage: boolean;
}) {
  const key = [...frameKey(frame), 'domains'];
  const domains = useList(key, (cursor) =>
    fp().api.GET(`${FRAME}/domains`, { params: { ...params(frame).params, query: { cursor } } }),
  );
  const add = useWrite(
    (hostname: string) =>
      fp().call(fp().api.POST(`${FRAME}/domains`, { ...params(frame), body: { hostname } })),
    [key],
  );
  const verify = useWrite(
    (domain_id: string) =>
      fp().call(fp().api.POST(`${FRAME}/domains/{domain_id}/verify`, pathOf(frame, { domain_id }))),
    [key],
  );
  const remove = useWrite(
    (domain_id: string) =>
      fp().call(fp().api.DELETE(`${FRAME}/domains/{domain_id}`, pathOf(frame, { domain_id }))),
    [key],
  );
  return (
    <section aria-labelledby="domains-title">
      <h2 id="domains-title">Domains</h2>
      <Problem error={verify.error ?? remove.error} />
      <Loaded query={domains}>
        {(list) => (
          <ul className="list">
            {list.length === 0 && <li className="muted">No domain.</li>}
            {list.map((d) => (
              <li key={d.id}>
                <strong>{d.hostname}</strong>{' '}
                {d.verified ? (
                  <span className="badge status-Online">verified</span>
                ) : (
                  <span className="muted">
                    add a TXT record <code>{d.verification.name}</code> ={' '}
                    <code>{d.verification.value}</code>
                  </span>
                )}{' '}
                <span className="muted">
                  · CNAME record: <code>{d.target}</code>
                </span>
                {canManage && (
                  <span className="actions">
                    {!d.verified && (
                      <button
                        type="button"
                        onClick={() => verify.mutate(d.id)}
                        disabled={verify.isPending}
                      >
                        Verify
                      </button>
                    )}
                    <ConfirmButton
                      label="Remove"
                      question={`Remove ${d.hostname}?`}
                      onConfirm={() => remove.mutate(d.id)}
                    />
                  </span>
                )}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      {canManage && (
        <form className="row" onSubmit={(e) => add.mutate(formValues(e).hostname ?? '')}>
          <Field
            label="Hostname"
            name="hostname"
            required
            hint={hostname && `then point its CNAME at ${hostname}`}
            error={add.error}
          />
          <Submit busy={add.isPending}>Add domain</Submit>
        </form>
      )}
      <Problem error={add.error} fields={['hostname']} />
    </section>
  );
}

export function FrameVolumes({ frame, canManage }: { frame: FrameRef; canManage: boolean }) {
  const key = [...frameKey(frame), 'volumes'];
  const volumes = useList(key, (cursor) =>
    fp().api.GET(`${FRAME}/volumes`, { params: { ...params(frame).params, query: { cursor } } }),
  );
  const add = useWrite(
    (body: { name: string; mount_path: string; size_gb: number }) =>
      fp().call(fp().api.POST(`${FRAME}/volumes`, { ...params(frame), body })),
    [key],
  );
  const remove = useWrite(
    (volume_id: string) =>
      fp().call(fp().api.DELETE(`${FRAME}/volumes/{volume_id}`, pathOf(frame, { volume_id }))),
    [key],
  );
  return (
    <section aria-labelledby="volumes-title">
      <h2 id="volumes-title">Volumes</h2>
      <Problem error={remove.error} />
      <Loaded query={volumes}>
        {(list) => (
          <ul className="list">
            {list.length === 0 && <li className="muted">No volume.</li>}
            {list.map((v) => (
              <li key={v.id}>
                <strong>{v.name}</strong> at <code>{v.mount_path}</code>, {v.size_gb} GB{' '}
                {canManage && (
                  <ConfirmButton
                    label="Remove"
                    question={`Remove ${v.name} and its data?`}
                    onConfirm={() => remove.mutate(v.id)}
                  />
                )}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      {canManage && (
        <form
          className="row"
          onSubmit={(e) => {
            const v = formValues(e);
            add.mutate({
              name: v.name ?? '',
              mount_path: v.mount_path ?? '',
              size_gb: Number(v.size_gb),
            });
          }}
        >
          <Field label="Volume name" name="name" required error={add.error} />
          <Field
            label="Mount path"
            name="mount_path"
            required
            placeholder="/data"
            error={add.error}
          />
          <Field
            label="Size (GB)"
            name="size_gb"
            type="number"
            min={1}
            defaultValue={1}
            error={add.error}
          />
          <Submit busy={add.isPending}>Add volume</Submit>
        </form>
      )}
      <Problem error={add.error} fields={['name', 'mount_path', 'size_gb']} />
    </section>
  );
}
