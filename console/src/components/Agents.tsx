// A project's self-hosted agents (admins): whether each is online, and registering one, whose
// token and install command are shown once, right after.
import { useState } from 'react';
import { fp, type Schemas, useWrite } from '../api.ts';
import { useAgents } from '../data/agents.ts';
import { Field, formValues, Problem, Submit } from './Form.tsx';
import { Loaded } from './Loaded.tsx';

export function Agents({ project_id }: { project_id: string }) {
  const agents = useAgents(project_id, true);
  const [created, setCreated] = useState<Schemas['NewAgent']>();
  const register = useWrite(
    (name: string) =>
      fp().call(
        fp().api.POST('/v2/projects/{project_id}/agents', {
          params: { path: { project_id } },
          body: { name },
        }),
      ),
    [['project', project_id, 'agents']],
  );
  return (
    <section aria-labelledby="agents-title">
      <h2 id="agents-title">Self-hosted agents</h2>
      <Loaded query={agents}>
        {(list) => (
          <ul className="list">
            {list.length === 0 && <li className="muted">No agent: frames run in the cloud.</li>}
            {list.map((a) => (
              <li key={a.id}>
                <strong>{a.name}</strong> {a.online ? 'online' : 'offline'}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form
        className="row"
        onSubmit={(e) => register.mutate(formValues(e).name ?? '', { onSuccess: setCreated })}
      >
        <Field label="Agent name" name="name" required error={register.error} />
        <Submit busy={register.isPending}>Register agent</Submit>
      </form>
      <Problem error={register.error} fields={['name']} />
      {created && (
        <div className="notice" role="status">
          <p>Run this on the agent's machine. The token is not shown again.</p>
          <code className="secret">{created.install.command}</code>
        </div>
      )}
    </section>
  );
}
