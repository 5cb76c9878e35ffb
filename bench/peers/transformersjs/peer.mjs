#!/usr/bin/env node
// Peer "transformers.js": @huggingface/transformers (node, onnxruntime-node CPU backend) on Kotae's
// own model files. transformers.js expects a model folder (config.json, tokenizer.json,
// tokenizer_config.json, onnx/model.onnx or onnx/model_quantized.onnx for dtype q8); it is built at
// run time in a temporary directory with symlinks to the input's model.onnx and tokenizer.json, so
// the files are the same and nothing is fetched (env.allowRemoteModels = false).
//
// Known difference: transformers.js truncates by cutting the encoded sequence at max_length, final [SEP]
// included, where the Hugging Face tokenizers keep [SEP]; texts past 256 tokens therefore embed slightly
// differently (cosine ~0.999 to the reference), and pairs past 512 lose their final [SEP].
//
// Usage: node peer.mjs --inputs INPUTS.json [--precision fp32,int8] [--cases single_query,bulk,rerank50]
//                      [--dump FILE]
// Prints one JSON object per line (same schema as the Python peers); diagnostics on stderr.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const IMPL = 'transformers.js';
const MAX_LENGTH = 256;         // sentence-transformers' max_seq_length for all-MiniLM-L6-v2
const RERANK_MAX_LENGTH = 512;
const RERANK_WARMUP = 2;
const DUMP_CHUNKS = 16;
const CASES = ['single_query', 'bulk', 'rerank50'];

const log = (...a) => console.error(...a);
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');

function parseArgs(argv) {
  const args = { precision: 'fp32,int8', cases: CASES.join(','), dump: null, inputs: null };
  for (let i = 0; i < argv.length; i++) {
    const m = argv[i].match(/^--(inputs|precision|cases|dump)(?:=(.*))?$/);
    if (!m) throw new Error(`unknown argument ${argv[i]}`);
    args[m[1]] = m[2] ?? argv[++i];
  }
  if (!args.inputs) throw new Error('usage: node peer.mjs --inputs INPUTS.json [--precision ..] [--cases ..] [--dump FILE]');
  args.precisions = args.precision.split(',').filter(Boolean);
  args.caseList = args.cases.split(',').filter(Boolean);
  return args;
}

// The one percentile definition of every benchmark (bench/README.md, "Latency figures"; the Python
// twin is bench/latency_stats.py): linear interpolation between the closest ranks of the sorted values.
function percentile(sorted, p) {
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}
const r4 = (x) => Math.round(x * 1e4) / 1e4;

async function timeSingle(fn, warmup, runs) {
  for (let i = 0; i < warmup; i++) await fn();
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return {
    p50_ms: r4(percentile(samples, 50)), p95_ms: r4(percentile(samples, 95)), p99_ms: r4(percentile(samples, 99)),
    mean_ms: r4(samples.reduce((a, b) => a + b, 0) / samples.length), min_ms: r4(samples[0]), runs,
  };
}

const BERT_CONFIG = {
  model_type: 'bert', architectures: ['BertModel'], vocab_size: 30522, hidden_size: 384, num_hidden_layers: 6,
  num_attention_heads: 12, intermediate_size: 1536, hidden_act: 'gelu', max_position_embeddings: 512,
  type_vocab_size: 2, layer_norm_eps: 1e-12, pad_token_id: 0,
};
const TOKENIZER_CONFIG = {
  tokenizer_class: 'BertTokenizer', do_lower_case: true, tokenize_chinese_chars: true, strip_accents: null,
  cls_token: '[CLS]', sep_token: '[SEP]', pad_token: '[PAD]', unk_token: '[UNK]', mask_token: '[MASK]',
  clean_up_tokenization_spaces: true,
};

// A transformers.js model folder for one ONNX file: symlinks to the input's files plus the two configs
// transformers.js needs (the tokenizer.json's own padding/truncation are overridden per call).
function modelFolder(root, name, srcDir, onnxName, config, maxLength) {
  const dir = path.join(root, name);
  fs.mkdirSync(path.join(dir, 'onnx'), { recursive: true });
  fs.symlinkSync(path.resolve(srcDir, 'model.onnx'), path.join(dir, 'onnx', onnxName));
  fs.symlinkSync(path.resolve(srcDir, 'tokenizer.json'), path.join(dir, 'tokenizer.json'));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'),
    JSON.stringify({ ...TOKENIZER_CONFIG, model_max_length: maxLength }));
  return name;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const inputs = JSON.parse(fs.readFileSync(args.inputs, 'utf8'));
  const s = { single_runs: 200, warmup: 10, bulk_repeats: 1, rerank_runs: 20, threads: 2, batch_size: 32,
              ...(inputs.settings ?? {}) };
  const threads = Number(s.threads);
  process.env.OMP_NUM_THREADS = String(threads);

  const tf = await import('@huggingface/transformers');
  const { env, pipeline, AutoTokenizer, AutoModelForSequenceClassification } = tf;
  const require = createRequire(import.meta.url);
  const ortVersion = require('onnxruntime-node/package.json').version;
  const tfVersion = env.version ?? require('@huggingface/transformers/package.json').version;
  const version = `@huggingface/transformers ${tfVersion}, onnxruntime-node ${ortVersion}, node ${process.versions.node}`;
  const sessionOptions = {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential',
  };
  log(`[${IMPL}] ${version}; session options ${JSON.stringify(sessionOptions)}, device cpu`);
  const common = { version, threads, same_files: true };

  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kotae-tjs-'));
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = root + path.sep;
  env.useBrowserCache = false;
  env.useFSCache = false;

  const guarded = async (what, fn) => {
    try { await fn(); return true; } catch (err) {
      log(err?.stack ?? err);
      emit({ case: 'skipped', impl: IMPL, what, reason: `error: ${String(err?.message ?? err)}`.slice(0, 500), version });
      return false;
    }
  };
  const dump = { impl: IMPL };

  try {
    for (const precision of args.precisions) {
      const srcDir = inputs.models?.[precision];
      if (!srcDir) {
        emit({ case: 'skipped', impl: IMPL, what: `${precision} embedding`, reason: 'no model directory in the input file', version });
        continue;
      }
      // transformers.js names the 8-bit file model_quantized.onnx (dtype "q8").
      const [onnxName, dtype] = precision === 'int8' ? ['model_quantized.onnx', 'q8'] : ['model.onnx', 'fp32'];
      let extractor;
      if (!await guarded(`${precision} load`, async () => {
        const id = modelFolder(root, `minilm-${precision}`, srcDir, onnxName, BERT_CONFIG, MAX_LENGTH);
        extractor = await pipeline('feature-extraction', id, { dtype, device: 'cpu', session_options: sessionOptions });
      })) continue;
      const embed = (texts) => extractor(texts, { pooling: 'mean', normalize: true });
      const query = inputs.query;
      const chunks = inputs.chunks;

      if (args.caseList.includes('single_query')) {
        await guarded(`single_query ${precision}`, async () => {
          const stats = await timeSingle(() => embed([query]), Number(s.warmup), Number(s.single_runs));
          emit({ case: 'single_query', impl: IMPL, precision, ...stats, ...common });
        });
      }
      if (args.caseList.includes('bulk')) {
        await guarded(`bulk ${precision}`, async () => {
          const bs = Number(s.batch_size);
          let best = Infinity;
          for (let r = 0; r < Math.max(1, Number(s.bulk_repeats)); r++) {
            const t0 = process.hrtime.bigint();
            for (let i = 0; i < chunks.length; i += bs) await embed(chunks.slice(i, i + bs));
            best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
          }
          // Tokens the model saw (padding excluded), counted untimed with the same tokenizer.
          let tokens = 0;
          for (let i = 0; i < chunks.length; i += bs) {
            const enc = extractor.tokenizer(chunks.slice(i, i + bs), { padding: true, truncation: true });
            tokens += Number(enc.attention_mask.sum().item());
          }
          emit({ case: 'bulk', impl: IMPL, precision, chunks: chunks.length, seconds: r4(best),
                 chunks_per_s: Math.round((chunks.length / best) * 1e3) / 1e3,
                 tokens_per_s: Math.round((tokens / best) * 10) / 10, tokens, batch_size: bs, ...common });
        });
      }
      if (args.dump) {
        await guarded(`dump ${precision}`, async () => {
          const q = await embed([query]);
          const c = await embed(chunks.slice(0, DUMP_CHUNKS));
          dump[precision] = { query: q.tolist()[0], chunks: c.tolist() };
        });
      }
      await extractor.dispose();
    }

    if (args.caseList.includes('rerank50')) {
      const cross = inputs.models?.cross_encoder;
      const rerank = inputs.rerank;
      if (!cross) {
        emit({ case: 'skipped', impl: IMPL, what: 'rerank50', reason: 'no cross-encoder directory in the input file', version });
      } else if (!rerank) {
        emit({ case: 'skipped', impl: IMPL, what: 'rerank50', reason: 'no rerank query and passages in the input file', version });
      } else {
        await guarded('rerank50', async () => {
          const config = { ...BERT_CONFIG, architectures: ['BertForSequenceClassification'], num_labels: 1,
                           id2label: { 0: 'LABEL_0' }, label2id: { LABEL_0: 0 } };
          // The cross-encoder's own config.json, where it has one, says what it is.
          const own = path.join(cross, 'config.json');
          const crossConfig = fs.existsSync(own) ? JSON.parse(fs.readFileSync(own, 'utf8')) : config;
          const id = modelFolder(root, 'cross-encoder', cross, 'model.onnx', crossConfig, RERANK_MAX_LENGTH);
          const tokenizer = await AutoTokenizer.from_pretrained(id);
          const model = await AutoModelForSequenceClassification.from_pretrained(
            id, { dtype: 'fp32', device: 'cpu', session_options: sessionOptions });
          const passages = rerank.passages;
          const bs = Number(s.batch_size);
          const score = async () => {
            const out = [];
            for (let i = 0; i < passages.length; i += bs) {
              const batch = passages.slice(i, i + bs);
              const enc = tokenizer(new Array(batch.length).fill(rerank.query),
                { text_pair: batch, padding: true, truncation: true, max_length: RERANK_MAX_LENGTH });
              const { logits } = await model(enc);
              out.push(...logits.data);
            }
            return out;
          };
          const stats = await timeSingle(score, RERANK_WARMUP, Number(s.rerank_runs));
          emit({ case: 'rerank50', impl: IMPL, precision: 'fp32', passages: passages.length, batch_size: bs,
                 truncation: 'tail of the encoded pair (passage end and final [SEP] cut)',
                 ...stats, ...common });
          if (args.dump) dump.rerank_scores = await score();
          await model.dispose();
        });
      }
    }
    if (args.dump) fs.writeFileSync(args.dump, JSON.stringify(dump));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err) => { log(err?.stack ?? err); process.exit(1); });
