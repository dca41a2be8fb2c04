/** Bundles `entry` (relative to the repository) and answers the bundle's path. */
export function buildServer(entry: string, name: string): Promise<string>;
