// Checked access to lists and maps for tests under `noUncheckedIndexedAccess`: where a test
// knows a value is there, these say so and fail with a message that names what was missing,
// instead of a TypeError a few lines later.

/** The element at `index` (negative counts from the end); throws when there is none. */
export function at<T>(list: readonly T[], index: number, what = 'list'): T {
  const i = index < 0 ? list.length + index : index;
  if (i < 0 || i >= list.length) {
    throw new Error(`${what} has no element ${index} (length ${list.length})`);
  }
  return list[i] as T;
}

/** The one element of a list that must hold exactly one. */
export function only<T>(list: readonly T[], what = 'list'): T {
  if (list.length !== 1) throw new Error(`${what} holds ${list.length} elements, expected 1`);
  return list[0] as T;
}

/** The value of a key that must be present in a record. */
export function must<V>(record: Readonly<Record<string, V>>, key: string, what = 'record'): V {
  const value = record[key];
  if (value === undefined) throw new Error(`${what} has no entry ${key}`);
  return value;
}

/** Group `group` of the first match of `pattern` in `text`; throws when it does not match. */
export function capture(pattern: RegExp, text: string, group = 1): string {
  const m = pattern.exec(text);
  const value = m?.[group];
  if (value === undefined) throw new Error(`${pattern} (group ${group}) not found in: ${text}`);
  return value;
}
