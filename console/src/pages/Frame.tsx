// One frame: its address (a link to its URL), its live status (the event stream), the actions a
// member may take, settings and scale, its previews (on a preview: the frame it previews), its
// releases (a rollback pauses push deploys until resumed), env vars, domains, volumes,
// deployments, events and live logs. What a role cannot do is not offered: viewers read,
// members operate and edit, admins manage domains and volumes.
import { Link, useParams } from 'react-router';
import { atLeast, fp, useRead } from '../api.ts';
import { FrameActions } from '../components/FrameActions.tsx';
import { FrameDelete } from '../components/FrameDelete.tsx';
import { FrameAddress } from '../components/FrameAddress.tsx';
import { FrameEnv } from '../components/FrameEnv.tsx';
import { FramePreviewOf } from '../components/FramePreviewOf.tsx';
import { FramePreviews } from '../components/FramePreviews.tsx';
import { FramePushDeploys } from '../components/FramePushDeploys.tsx';
import { FrameReleases } from '../components/FrameReleases.tsx';
import { Deployments, Events, Logs } from '../components/FrameHistory.tsx';
import { FrameDomains, FrameVolumes } from '../components/FrameResources.tsx';
import { FrameSettings } from '../components/FrameSettings.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { type FrameRef, frameKey, params, useLiveEvents, useLiveLogs } from '../data/frames.ts';
import { useProject } from '../data/projects.ts';

export function FramePage() {
  const { projectId = '', spaceId = '', frameId = '' } = useParams();
  const ref: FrameRef = { project_id: projectId, space_id: spaceId, id: frameId };
  const project = useProject(projectId);
  const frame = useRead(frameKey(ref), () =>
    fp().call(
      fp().api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}', params(ref)),
    ),
  );
  const live = useLiveEvents(ref);
  const logs = useLiveLogs(ref);
  const role = project.data?.role;
  return (
    <>
      <p>
        <Link to={`/console/projects/${projectId}/spaces/${spaceId}`}>← Space</Link>
      </p>
      <Loaded query={frame}>
        {(f) => (
          <>
            <h1>{f.name}</h1>
            <FramePreviewOf frame={f} />
            <p id="frame-address">
              <FrameAddress frame={f} why />
            </p>
            <p>
              <span className={`badge status-${f.status}`} id="frame-status" aria-live="polite">
                {f.status}
              </span>{' '}
              {f.status_reason && <span className="muted">{f.status_reason}</span>}{' '}
              <span className="muted">
                {f.runtime.kind === 'agent'
                  ? `on a self-hosted agent (${f.agent_online ? 'online' : 'offline'})`
                  : 'in the cloud'}
                {f.latest_deployment && ` · latest deployment ${f.latest_deployment.status}`}
              </span>
            </p>
            <FramePushDeploys frame={f} canOperate={atLeast(role, 'member')} />
            <FrameActions frame={f} canOperate={atLeast(role, 'member')} />
            <FrameSettings frame={f} canEdit={atLeast(role, 'member')} />
            {/* A preview has no previews of its own (the API refuses them). */}
            {!f.preview && <FramePreviews frame={f} canEdit={atLeast(role, 'member')} />}
          </>
        )}
      </Loaded>
      <Logs lines={logs.lines} error={logs.error} />
      <Events events={live.events} error={live.error} />
      {frame.data && <FrameReleases frame={frame.data} canOperate={atLeast(role, 'member')} />}
      <Deployments frame={ref} />
      <FrameEnv frame={ref} canEdit={atLeast(role, 'member')} />
      <FrameDomains
        frame={ref}
        hostname={frame.data?.hostname}
        canManage={atLeast(role, 'admin')}
      />
      <FrameVolumes frame={ref} canManage={atLeast(role, 'admin')} />
      {frame.data && atLeast(role, 'admin') && <FrameDelete frame={frame.data} />}
    </>
  );
}
