// The first lines of the CLI's bundle (package-build.ts): what CommonJS dependencies expect.
import { createRequire as __cr } from 'node:module';
import { fileURLToPath as __fu } from 'node:url';
const require = __cr(import.meta.url);
const __filename = __fu(import.meta.url);
const __dirname = __fu(new URL('.', import.meta.url));
