// Stands in for onnxruntime-node in the GPU check's bundle: the check serves on onnxruntime-web
// only, and a native addon cannot travel in a single JavaScript file.
throw new Error("onnxruntime-node is not part of the GPU check bundle");
