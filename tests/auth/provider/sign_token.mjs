// Signs claims as the test provider would: node sign_token.mjs PRIVATE_JWK HEADER CLAIMS (each JSON)
// prints a compact JWS. The tests give it the key make_key.mjs made for the live provider and claims
// laid out as the provider's own tokens, with times the provider would never write (expired, not yet
// valid), so that only the server's time checks can refuse them.
import { importJWK, CompactSign } from 'jose';

const [jwk, header, claims] = process.argv.slice(2).map((value) => JSON.parse(value));
const key = await importJWK(jwk, header.alg);
const token = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims))).setProtectedHeader(header).sign(key);
console.log(token);
