// The console's one way to the API: the typed SDK (src/sdk) with the session's token, and React
// Query hooks around it. Reads are cached under a key and refetched when a write that touches
// them succeeds; every failure is a FrameplaneError (problem+json), shown by the forms.
import {
  type QueryKey,
  useMutation,
  useQuery,
  useQueryClient,
  QueryCache,
  QueryClient,
  MutationCache,
} from '@tanstack/react-query';
import {
  createFrameplane,
  FrameplaneError,
  NOTIFICATION_EVENTS,
  type NotificationEvent,
  type Page,
  type Schemas,
  slugOf,
} from '../../src/sdk/index.ts';
import { getToken, setToken } from './session.ts';

export type { NotificationEvent, Schemas };
export { FrameplaneError, NOTIFICATION_EVENTS, slugOf };

/** A client for the current token (the SDK keeps its token; a new token is a new client). */
let current: { token: string | null; fp: ReturnType<typeof createFrameplane> } | undefined;
export function fp() {
  const token = getToken();
  if (current?.token !== token)
    current = {
      token,
      fp: createFrameplane({ server: window.location.origin, token: token ?? undefined }),
    };
  return current.fp;
}

/** An answer of 401 means the token is gone (revoked, expired): back to the sign-in page. */
function signedOutOn401(err: unknown) {
  if (err instanceof FrameplaneError && err.status === 401 && getToken()) setToken(null);
}

export const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError: signedOutOn401 }),
  mutationCache: new MutationCache({ onError: signedOutOn401 }),
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      // A refusal will not change by asking again; a failure of the service may.
      retry: (n, err) => n < 2 && (!(err instanceof FrameplaneError) || err.status >= 500),
    },
  },
});

/** A cached read. */
export function useRead<T>(key: QueryKey, read: () => Promise<T>, enabled = true) {
  return useQuery({ queryKey: key, queryFn: read, enabled });
}

/** One page of a cursor list, as openapi-fetch answers it. */
export type Pager<T> = (
  cursor: string | undefined,
) => Promise<{ data?: Page<T>; error?: unknown; response: Response }>;

/** A cached read of every item of a cursor list (lists that are small by nature). */
export function useList<T>(key: QueryKey, pager: Pager<T>, enabled = true) {
  return useRead(key, () => fp().all(pager), enabled);
}

/** A write; on success the reads under `refresh` are fetched again. */
export function useWrite<A, T>(write: (args: A) => Promise<T>, refresh: QueryKey[] = []) {
  const client = useQueryClient();
  return useMutation<T, FrameplaneError, A>({
    mutationFn: write,
    onSuccess: async () => {
      await Promise.all(refresh.map((queryKey) => client.invalidateQueries({ queryKey })));
    },
  });
}

const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];
/** Whether `role` is at least `needed` (viewer < member < admin < owner). */
export const atLeast = (role: Role | undefined, needed: Role) =>
  role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(needed);

/** The signed-in user; undefined while signed out. */
export const useMe = () =>
  useRead(['me'], () => fp().call(fp().api.GET('/v2/user')), getToken() !== null);
