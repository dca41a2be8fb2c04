// One frame, laid out like a hosting service's page: a header (name, live status with its
// reason in words, the actions a member may take, notices), then tabs. Overview: its URL, the
// release it serves, its recent events. Logs: live logs and every event. Metrics: charts of its
// usage and of the requests it answered. Deployments: its releases newest first and its previews
// (on a preview: the frame it previews, above). Settings, with the danger zone at the end;
// Environment; Domains; Volumes. The event and log streams belong to the page, so they keep
// running whichever tab is open. What a role cannot do is not offered: viewers read, members
// operate and edit, admins manage domains, volumes and deletion.
import { useState } from 'react';
import { useParams } from 'react-router';
import { atLeast, fp, type Role, useRead } from '../api.ts';
import { FrameActions, PendingChanges } from '../components/FrameActions.tsx';
import { FrameDelete } from '../components/FrameDelete.tsx';
import { FrameEnv } from '../components/FrameEnv.tsx';
import { FrameMetrics } from '../components/FrameMetrics.tsx';
import { Events, type LiveEvents, Logs } from '../components/FrameHistory.tsx';
import { FrameOverview } from '../components/FrameOverview.tsx';
import { FramePreviewOf } from '../components/FramePreviewOf.tsx';
import { FramePreviews } from '../components/FramePreviews.tsx';
import { FramePushDeploys } from '../components/FramePushDeploys.tsx';
import { FrameReleases } from '../components/FrameReleases.tsx';
import { FrameDomains, FrameVolumes } from '../components/FrameResources.tsx';
import { FrameSettings } from '../components/FrameSettings.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { Tabs } from '../components/Tabs.tsx';
import { inWords } from '../components/words.ts';
import { BackLink } from '../components/BackLink.tsx';
import {
  type Frame,
  frameKey,
  type LogFilter,
  params,
  useLiveEvents,
  useLiveLogs,
} from '../data/frames.ts';
import { useProject, useSpace } from '../data/projects.ts';

const TABS = [
  { id: 'overview', title: 'Overview' },
  { id: 'logs', title: 'Logs' },
  { id: 'metrics', title: 'Metrics' },
  { id: 'deployments', title: 'Deployments' },
  { id: 'settings', title: 'Settings' },
  { id: 'environment', title: 'Environment' },
  { id: 'domains', title: 'Domains' },
  { id: 'volumes', title: 'Volumes' },
];

function Header({ frame: f, role }: { frame: Frame; role: Role | undefined }) {
  const member = atLeast(role, 'member');
  return (
    <>
      <header className="frame-head">
        <div>
          <h1>{f.name}</h1>
          {/* The status and its reason change together: read out together. */}
          <p className="frame-status" aria-live="polite">
            <span className={`badge status-${f.status}`} id="frame-status">
              {f.status}
            </span>
            {f.status_reason && (
              <span id="frame-status-reason" title={f.status_reason}>
                {inWords(f.status_reason)}
              </span>
            )}
          </p>
        </div>
        <FrameActions frame={f} canOperate={member} />
      </header>
      <PendingChanges frame={f} canOperate={member} />
      <FramePreviewOf frame={f} />
      <FramePushDeploys frame={f} canOperate={member} />
    </>
  );
}

export function FramePage() {
  const { projectId = '', spaceId = '', frameId = '' } = useParams();
  const ref = { project_id: projectId, space_id: spaceId, id: frameId };
  const project = useProject(projectId);
  const frame = useRead(frameKey(ref), () =>
    fp().call(
      fp().api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}', params(ref)),
    ),
  );
  const live: LiveEvents = useLiveEvents(ref);
  const space = useSpace(projectId, spaceId);
  const [logFilter, setLogFilter] = useState<LogFilter>({});
  const logs = useLiveLogs(ref, logFilter);
  const role = project.data?.role;
  const member = atLeast(role, 'member');
  const admin = atLeast(role, 'admin');
  return (
    <>
      <BackLink to={`/console/projects/${projectId}/spaces/${spaceId}`} name={space.data?.name} />
      <Loaded query={frame}>
        {(f) => (
          <>
            <Header frame={f} role={role} />
            <Tabs
              label="Frame"
              tabs={TABS}
              panel={(tab) => {
                switch (tab) {
                  case 'logs':
                    return (
                      <>
                        <Logs
                          lines={logs.lines}
                          error={logs.error}
                          filter={logFilter}
                          onFilter={setLogFilter}
                        />
                        <Events live={live} />
                      </>
                    );
                  case 'metrics':
                    return <FrameMetrics frame={f} />;
                  case 'deployments':
                    return (
                      <>
                        <FrameReleases frame={f} canOperate={member} />
                        {/* A preview has no previews of its own (the API refuses them). */}
                        {!f.preview && <FramePreviews frame={f} canEdit={member} />}
                      </>
                    );
                  case 'settings':
                    return (
                      <>
                        <FrameSettings frame={f} canEdit={member} />
                        {admin && <FrameDelete frame={f} />}
                      </>
                    );
                  case 'environment':
                    return <FrameEnv frame={f} canEdit={member} />;
                  case 'domains':
                    return <FrameDomains frame={f} hostname={f.hostname} canManage={admin} />;
                  case 'volumes':
                    return <FrameVolumes frame={f} canManage={admin} />;
                  default:
                    return <FrameOverview frame={f} live={live} />;
                }
              }}
            />
          </>
        )}
      </Loaded>
    </>
  );
}
