import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { performance } from 'node:perf_hooks';
const N = Number(process.argv[2] ?? 100000), D = 384;
const b = await PGlite.create({ extensions: { vector } }); await b.exec('CREATE EXTENSION IF NOT EXISTS vector');
await b.exec(`CREATE TABLE tv (subject_id text, model text, session_id text, seq int, dims int, embedding real[], PRIMARY KEY (subject_id, model, session_id, seq))`);
let t = performance.now();
await b.exec(`INSERT INTO tv SELECT 'owner', 'm', 's' || (i / 20), i % 20, ${D}, (SELECT array_agg((random() - 0.5)::real) FROM generate_series(1,${D}) g WHERE i > 0) FROM generate_series(1,${N}) i`);
console.log('insert', performance.now() - t);
await b.exec(`VACUUM ANALYZE tv`);
const q = '[' + Array.from({length:D}, () => Math.random() - 0.5).join(',') + ']';
t = performance.now();
await b.query(`SELECT session_id, seq FROM tv WHERE subject_id='owner' AND model='m' AND dims=${D} ORDER BY embedding::vector <=> $1::vector LIMIT 10`, [q]);
console.log('exact cast', performance.now() - t);
t = performance.now();
await b.exec(`SET maintenance_work_mem = '512MB'`);
await b.exec(`CREATE INDEX tv_h ON tv USING hnsw ((embedding::vector(${D})) vector_cosine_ops) WHERE dims = ${D}`);
console.log('hnsw build', performance.now() - t);
await b.exec(`SET hnsw.iterative_scan = strict_order`);
for (let r = 0; r < 5; r++) {
  const q2 = '[' + Array.from({length:D}, () => Math.random() - 0.5).join(',') + ']';
  t = performance.now();
  const res = await b.query(`SELECT session_id, seq FROM tv WHERE subject_id='owner' AND model='m' AND dims=${D} ORDER BY embedding::vector(${D}) <=> $1::vector(${D}) LIMIT 10`, [q2]);
  console.log('hnsw q', (performance.now() - t).toFixed(1), res.rows.length);
}
console.log((await b.query(`EXPLAIN SELECT session_id, seq FROM tv WHERE subject_id='owner' AND model='m' AND dims=${D} ORDER BY embedding::vector(${D}) <=> $1::vector(${D}) LIMIT 10`, [q])).rows.map(r => r['QUERY PLAN'].slice(0, 100)));
t = performance.now();
for (let i = 0; i < 64; i++) await b.query(`INSERT INTO tv VALUES ('owner','m','new',$1,${D},$2::real[])`, [i, '{' + q.slice(1,-1) + '}']);
console.log('64 inserts', performance.now() - t);
