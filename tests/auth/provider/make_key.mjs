// Prints a new private signing key as a JWK: node make_key.mjs ALG KID (ALG: ES256 or RS256), for
// the test provider's configuration (provider.mjs).
import { generateKeyPairSync } from 'node:crypto';

const [alg, kid] = process.argv.slice(2);
const { privateKey } =
  alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
console.log(JSON.stringify({ ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' }));
