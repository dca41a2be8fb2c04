// A project's notification endpoints and each one's recent deliveries, read by the project
// page's notifications section (admins).
import { useQuery } from '@tanstack/react-query';
import { fp, useList } from '../api.ts';

export const endpointsKey = (project_id: string) => ['project', project_id, 'notifications'];
export const deliveriesKey = (project_id: string, endpoint_id: string) => [
  ...endpointsKey(project_id),
  endpoint_id,
  'deliveries',
];

export const useEndpoints = (project_id: string) =>
  useList(endpointsKey(project_id), (cursor) =>
    fp().api.GET('/v2/projects/{project_id}/notifications', {
      params: { path: { project_id }, query: { cursor } },
    }),
  );

/** How many deliveries are shown: the newest, as a log's first page. */
const RECENT = 20;

/** The newest deliveries, read again every 3 s while one of them waits for its try: no event
 *  says that a try was made. */
export const useDeliveries = (project_id: string, endpoint_id: string) =>
  useQuery({
    queryKey: deliveriesKey(project_id, endpoint_id),
    queryFn: () =>
      fp().call(
        fp().api.GET('/v2/projects/{project_id}/notifications/{endpoint_id}/deliveries', {
          params: { path: { project_id, endpoint_id }, query: { limit: RECENT } },
        }),
      ),
    refetchInterval: (q) => (q.state.data?.data.some((d) => d.status === 'pending') ? 3000 : false),
  });
