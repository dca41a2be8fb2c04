// Where a frame is reached (CONTRACT 5b): its own hostname, made once from its name and id, and
// its URL, which also depends on its agent's edge. Pure functions; migrations/0023 computes the
// same label in SQL for the frames that existed before it.

/** The longest name part of a label: with `-` and 6 characters, 47 of DNS's 63. */
export const NAME_PART_MAX = 40;

/**
 * The name part of a frame's label: its name with every run of characters outside [A-Za-z0-9]
 * turned into one `-`, lower-cased, trimmed of `-`, at most NAME_PART_MAX characters, `app`
 * when nothing is left. Only ASCII letters count as letters, and only after the runs are
 * replaced is the rest lower-cased: so the migration's SQL agrees with this whatever the
 * database's locale (JavaScript lower-cases the Kelvin sign to `k`, PostgreSQL may not).
 */
export function namePart(name: string): string {
  const part = name
    .replace(/[^A-Za-z0-9]+/g, '-')
    .toLowerCase()
    .replace(/^-+|-+$/g, '')
    .slice(0, NAME_PART_MAX)
    .replace(/-+$/, '');
  return part || 'app';
}

/**
 * Six lower-case base32 characters of the id: the last ones of its ULID's random part. Ids
 * made in the same millisecond by one process differ there (ulidx's monotonic factory counts
 * up from the last character), and elsewhere the characters are random.
 */
export function idPart(id: string): string {
  return id.slice(-6).toLowerCase();
}

/** The frame's DNS label, `<name part>-<id part>`, stored at creation and never changed. */
export function hostnameLabel(name: string, id: string): string {
  return `${namePart(name)}-${idPart(id)}`;
}

/** The frame's hostname under the service's APPS_DOMAIN. */
export function frameHostname(label: string, appsDomain: string): string {
  return `${label}.${appsDomain}`;
}

/** What an agent said of its edge (sync body `edge`); nulls when it has none or never said. */
export interface EdgePorts {
  http: number | null;
  https: number | null;
}

/**
 * The frame's URL through its agent's edge: HTTPS when the edge has TLS (port 443 left out),
 * else HTTP (port 80 left out); null when the agent has no edge, or has not said it has one.
 */
export function frameUrl(hostname: string, edge: EdgePorts): string | null {
  if (edge.https !== null)
    return `https://${hostname}${edge.https === 443 ? '' : `:${edge.https}`}`;
  if (edge.http !== null) return `http://${hostname}${edge.http === 80 ? '' : `:${edge.http}`}`;
  return null;
}
