// TLS from ACME on the HAProxy plane (the suite: acme-suite.ts): certificates given to haproxy
// through its Runtime API, challenges passed to the agent.
import { acmeSuite } from './acme-suite.ts';

acmeSuite('haproxy');
