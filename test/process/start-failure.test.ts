// The line a failed start prints (src/start-failure.ts), case by case.
import { describe, expect, it } from 'vitest';
import { SettingError, startFailureLine } from '../../src/start-failure.ts';

const ctx = { port: 8080, host: '127.0.0.1', databaseUrl: 'postgres://u:pw@db.example:6432/fp' };
const failure = (code: string, extra: object = {}) =>
  Object.assign(new Error(`failed: ${code}`), { code, ...extra });

describe('startFailureLine', () => {
  it.each([
    [
      new SettingError('PORT must be a port number (1..65535), got "x"'),
      'PORT must be a port number (1..65535), got "x"',
    ],
    [
      failure('EADDRINUSE', { syscall: 'listen' }),
      'port 8080 on 127.0.0.1 is in use by another program; set PORT to a free port',
    ],
    [
      failure('EACCES', { syscall: 'listen' }),
      'port 8080 needs privileges this user does not have; set PORT to one above 1023',
    ],
    [
      failure('EADDRNOTAVAIL', { syscall: 'listen' }),
      '127.0.0.1 is not an address of this machine (127.0.0.1:8080); set HOST, e.g. 127.0.0.1',
    ],
    [
      failure('ECONNREFUSED'),
      'DATABASE_URL: cannot connect to db.example:6432/fp: nothing answers there (connection refused)',
    ],
    [
      failure('ENOTFOUND'),
      'DATABASE_URL: cannot connect to db.example:6432/fp: that host name is unknown',
    ],
    [
      failure('28P01'),
      'DATABASE_URL: cannot connect to db.example:6432/fp: the password was refused',
    ],
    [
      failure('3D000'),
      'DATABASE_URL: cannot connect to db.example:6432/fp: that database does not exist',
    ],
  ])('%s', (err, line) => {
    expect(startFailureLine(err, ctx)).toBe(line);
  });

  it('never prints the password of DATABASE_URL', () => {
    expect(startFailureLine(failure('28P01'), ctx)).not.toContain('pw');
  });

  it('leaves a failure no setting explains to the stack trace', () => {
    expect(startFailureLine(new TypeError('x is undefined'), ctx)).toBeUndefined();
    expect(startFailureLine(undefined, ctx)).toBeUndefined();
    // A database failure with the embedded database is ours, not a setting's.
    expect(
      startFailureLine(failure('ECONNREFUSED'), { ...ctx, databaseUrl: undefined }),
    ).toBeUndefined();
  });
});
