// `frameplane frames domains` against a real service: claim a hostname, read the TXT record the
// CLI prints, fail to verify before it is published (422 and its reason), publish it in the
// test's DNS table, verify, list, remove.
import { describe, expect, it } from 'vitest';
import { createWebFrame, expectProblem, run, runJson } from './run.ts';
import { serviceForFile, shopWorld } from './service.ts';

const svc = serviceForFile();

describe('frames domains', () => {
  it('claims a hostname, shows its TXT record, verifies it and removes it', async () => {
    const { env, agent } = await shopWorld(svc.t, svc.server);
    const p = ['-p', 'Shop'];
    const frame = await runJson(createWebFrame(agent.id), env);

    const added = await run(['frames', 'domains', 'add', 'web', 'Shop.Example.com.', ...p], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^hostname:\s+shop\.example\.com$/m);
    expect(added.stdout).toMatch(/^record type:\s+TXT$/m);
    expect(added.stderr).toContain('Create that TXT record');
    // What the user copies into their DNS, as printed.
    const name = /^record name:\s+(\S+)$/m.exec(added.stdout)?.[1] ?? '';
    const value = /^record value:\s+(\S+)$/m.exec(added.stdout)?.[1] ?? '';
    expect(name).toBe('_frameplane-challenge.shop.example.com');
    expect(value).toMatch(/^frameplane-verify=/);

    const listed = await run(['frames', 'domains', 'list', 'web', ...p], env);
    expect(listed.stdout).toMatch(/^ID\s+HOSTNAME\s+VERIFIED\s+CNAME TARGET\s+DNS RECORD$/m);
    expect(listed.stdout).toMatch(/shop\.example\.com {2}no {8}web-\w{6}\.localhost {2}TXT /);
    expect(listed.stdout).toContain(`  TXT ${name} "${value}"`);

    // Not in DNS yet: the service's reason, and exit 5.
    const early = await run(['frames', 'domains', 'verify', 'web', 'shop.example.com', ...p], env);
    expectProblem(early, 5, 422, 'domain_verification_failed');
    expect(early.stderr).toMatch(/^ {2}verification: .+/m);

    svc.t.dns.add(name, value);
    const verified = await runJson(
      ['frames', 'domains', 'verify', 'web', 'shop.example.com', ...p],
      env,
    );
    expect(verified).toMatchObject({
      frame_id: frame.id,
      hostname: 'shop.example.com',
      verified: true,
    });
    expect(await runJson(['frames', 'domains', 'list', 'web', ...p], env)).toMatchObject([
      { id: verified.id, verified: true },
    ]);

    const invalid = await run(['frames', 'domains', 'add', 'web', 'not_a_host', ...p], env);
    expectProblem(invalid, 5, 422, 'invalid_hostname');

    const removed = await run(['frames', 'domains', 'remove', 'web', verified.id, ...p], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toContain('Removed shop.example.com');
    expect(await runJson(['frames', 'domains', 'list', 'web', ...p], env)).toEqual([]);
    const gone = await run(['frames', 'domains', 'remove', 'web', 'shop.example.com', ...p], env);
    expect(gone.code).toBe(4);
  });
});
