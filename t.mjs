import { PGlite } from '@electric-sql/pglite';
let t=Date.now(); const db = new PGlite(); await db.waitReady; console.log('mem boot', Date.now()-t);
t=Date.now(); const db2 = new PGlite(); await db2.waitReady; console.log('mem boot2', Date.now()-t);
t=Date.now(); const dump = await db2.dumpDataDir('none'); console.log('dump', Date.now()-t, dump.size);
t=Date.now(); const db3 = new PGlite({loadDataDir: dump}); await db3.waitReady; console.log('load boot', Date.now()-t);
t=Date.now(); const db4 = await db2.clone(); console.log('clone', Date.now()-t);
