{
  "targets": [
    {
      "target_name": "tensorfn_native",
      "sources": ["src/memory.c", "src/nvml.c"],
      "libraries": ["-ldl"],
      "cflags": ["-O2"]
    }
  ]
}
