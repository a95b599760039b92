// grpc_service.proto imports model_config.proto from beside itself, so its generated code imports
// this file: Triton's model configuration schema, generated once, in config/.
export * from "../../config/proto/model_config_pb.ts";
