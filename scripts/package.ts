// npm run package [DIR]: writes DIR/frameplane.tgz (default dist/), the package the service
// serves at /downloads/frameplane.tgz, and prints its sha256 as sha256sum does.
import { buildPackage } from '../src/downloads/package-build.ts';

const built = await buildPackage(process.argv[2] ?? 'dist');
process.stdout.write(`${built.sha256}  ${built.file}\n`);
