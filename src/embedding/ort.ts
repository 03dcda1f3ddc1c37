// The single place that imports onnxruntime-node, so the compiled binary can swap the native
// binding loader (tools/build.ts) without touching the embedders.
import * as ort from "onnxruntime-node";

export { ort };
export type { InferenceSession, Tensor } from "onnxruntime-node";
