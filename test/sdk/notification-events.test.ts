// The SDK's list of notification events (the console's checkboxes) is the service's, in its
// order: the typecheck holds the set to the generated schema; this holds the order too.
import { expect, it } from 'vitest';
import { NOTIFICATION_EVENTS as SERVICE } from '../../src/notifications/events.ts';
import { NOTIFICATION_EVENTS } from '../../src/sdk/index.ts';

it("lists the service's notification events, in its order", () => {
  expect(NOTIFICATION_EVENTS).toEqual([...SERVICE]);
});
