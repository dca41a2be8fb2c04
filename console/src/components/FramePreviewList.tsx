// A frame's preview frames, oldest first: each links to its own frame page, with the branch
// (and pull request) it runs, its status, its address and when it goes unless pushed to again.
import type { UseQueryResult } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { Frame, FrameRef } from '../data/frames.ts';
import { FrameAddress } from './FrameAddress.tsx';
import { Loaded } from './Loaded.tsx';
import { Table } from './Table.tsx';

/** The console's page of a frame. */
export const framePage = (f: FrameRef) =>
  `/console/projects/${f.project_id}/spaces/${f.space_id}/frames/${f.id}`;

export function FramePreviewList({
  list,
  branch,
}: {
  list: UseQueryResult<Frame[]>;
  branch: string;
}) {
  return (
    <Loaded query={list}>
      {(previews) =>
        previews.length === 0 ? (
          <p className="muted" id="previews-empty">
            No previews. While previews are on, a push to another branch or a pull request against{' '}
            <code>{branch}</code> makes one; the project's webhook must be set up.
          </p>
        ) : (
          <Table head={['Name', 'Branch', 'Pull request', 'Status', 'Address', 'Expires']} stacked>
            {previews.map((p) => (
              <tr key={p.id}>
                <td>
                  <Link to={framePage(p)}>{p.name}</Link>
                </td>
                <td data-label="Branch">
                  <code>{p.preview?.branch}</code>
                </td>
                <td data-label="Pull request">
                  {p.preview?.pull_request ? `#${p.preview.pull_request}` : '-'}
                </td>
                <td>
                  <span className={`badge status-${p.status}`}>{p.status}</span>
                </td>
                <td data-label="Address">
                  <FrameAddress frame={p} />
                </td>
                <td data-label="Expires">
                  {p.preview && new Date(p.preview.expires_at).toLocaleString()}
                </td>
              </tr>
            ))}
          </Table>
        )
      }
    </Loaded>
  );
}
