// A minimal writer for ONNX models (protobuf `ModelProto`), enough to build a toy sentence
// encoder for tests without downloading weights. Only varint and length-delimited fields are
// written; field numbers follow onnx/onnx.proto.

type Field = Uint8Array;

function varint(value: number): number[] {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`not a varint: ${value}`);
  const out: number[] = [];
  let v = value;
  while (v > 0x7f) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

/** A varint field (wire type 0). */
function int(field: number, value: number): Field {
  return Uint8Array.from([...varint(field * 8), ...varint(value)]);
}

/** A length-delimited field (wire type 2): bytes, a string or an embedded message. */
function bytes(field: number, payload: Uint8Array | string): Field {
  const body = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
  return concat([Uint8Array.from([...varint(field * 8 + 2), ...varint(body.length)]), body]);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const message = concat;

/** TensorProto.DataType values used here. */
export const FLOAT = 1;
export const INT64 = 7;

/** TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian). */
export function floatTensor(name: string, dims: readonly number[], values: readonly number[]) {
  const raw = new Uint8Array(new Float32Array(values).buffer);
  return message([...dims.map((d) => int(1, d)), int(2, FLOAT), bytes(8, name), bytes(9, raw)]);
}

export function int64Tensor(name: string, dims: readonly number[], values: readonly number[]) {
  const raw = new Uint8Array(new BigInt64Array(values.map(BigInt)).buffer);
  return message([...dims.map((d) => int(1, d)), int(2, INT64), bytes(8, name), bytes(9, raw)]);
}

/** ValueInfoProto { name, type: TypeProto { tensor_type { elem_type, shape { dim* } } } }. */
export function valueInfo(name: string, elemType: number, dims: readonly (string | number)[]) {
  // Dimension: dim_value (1) for a fixed size, dim_param (2) for a symbolic one.
  const dim = (d: string | number) => bytes(1, typeof d === 'number' ? int(1, d) : bytes(2, d));
  const shape = message(dims.map(dim));
  const tensorType = message([int(1, elemType), bytes(2, shape)]);
  return message([bytes(1, name), bytes(2, bytes(1, tensorType))]);
}

/** AttributeProto with an int value: name (1), i (3), type (20) = INT (2). */
export function intAttribute(name: string, value: number) {
  return message([bytes(1, name), int(3, value), int(20, 2)]);
}

/** NodeProto: input (1), output (2), name (3), op_type (4), attribute (5). */
export function node(
  opType: string,
  inputs: readonly string[],
  outputs: readonly string[],
  attributes: readonly Uint8Array[] = [],
) {
  return message([
    ...inputs.map((i) => bytes(1, i)),
    ...outputs.map((o) => bytes(2, o)),
    bytes(3, `${opType}_${outputs[0] ?? ''}`),
    bytes(4, opType),
    ...attributes.map((a) => bytes(5, a)),
  ]);
}

export interface GraphParts {
  nodes: readonly Uint8Array[];
  initializers: readonly Uint8Array[];
  inputs: readonly Uint8Array[];
  outputs: readonly Uint8Array[];
}

/**
 * ModelProto: ir_version (1) = 8, producer_name (2), graph (7), opset_import (8) for the default
 * domain at version 13. GraphProto: node (1), name (2), initializer (5), input (11), output (12).
 */
export function model(parts: GraphParts): Uint8Array {
  const graph = message([
    ...parts.nodes.map((n) => bytes(1, n)),
    bytes(2, 'tiny'),
    ...parts.initializers.map((t) => bytes(5, t)),
    ...parts.inputs.map((v) => bytes(11, v)),
    ...parts.outputs.map((v) => bytes(12, v)),
  ]);
  const opset = message([bytes(1, ''), int(2, 13)]);
  return message([int(1, 8), bytes(2, 'memledger-test'), bytes(7, graph), bytes(8, opset)]);
}

export interface TinyEncoderOptions {
  /** The embedding table, one row per token id, all rows of one length. */
  rows: readonly (readonly number[])[];
  /** Also declare a `token_type_ids` input (unused by the graph), as BERT exports do. */
  tokenTypeIds?: boolean;
  /** Sum over the sequence inside the model and output `sentence_embedding` [batch, dims]. */
  pooled?: boolean;
}

/**
 * A toy sentence encoder: `last_hidden_state[b, s] = E[input_ids[b, s]] * attention_mask[b, s]`,
 * i.e. Gather(E, input_ids), Cast(mask to float), Unsqueeze(axis 2), Mul. With `pooled`, a
 * ReduceSum over the sequence follows and the model outputs `sentence_embedding` instead.
 */
export function tinyEncoder(options: TinyEncoderOptions): Uint8Array {
  const dims = options.rows[0]?.length ?? 0;
  const inputs = [
    valueInfo('input_ids', INT64, ['batch', 'seq']),
    valueInfo('attention_mask', INT64, ['batch', 'seq']),
    ...(options.tokenTypeIds === true
      ? [valueInfo('token_type_ids', INT64, ['batch', 'seq'])]
      : []),
  ];
  const nodes = [
    node('Gather', ['E', 'input_ids'], ['g']),
    node('Cast', ['attention_mask'], ['m'], [intAttribute('to', FLOAT)]),
    node('Unsqueeze', ['m', 'axis2'], ['mu']),
    node('Mul', ['g', 'mu'], ['last_hidden_state']),
  ];
  const initializers = [
    floatTensor('E', [options.rows.length, dims], options.rows.flat()),
    int64Tensor('axis2', [1], [2]),
  ];
  if (options.pooled === true) {
    nodes.push(
      node(
        'ReduceSum',
        ['last_hidden_state', 'axis1'],
        ['sentence_embedding'],
        [intAttribute('keepdims', 0)],
      ),
    );
    initializers.push(int64Tensor('axis1', [1], [1]));
  }
  const outputs = [
    options.pooled === true
      ? valueInfo('sentence_embedding', FLOAT, ['batch', dims])
      : valueInfo('last_hidden_state', FLOAT, ['batch', 'seq', dims]),
  ];
  return model({ nodes, initializers, inputs, outputs });
}
