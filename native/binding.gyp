{
  "targets": [
    {
      "target_name": "tensorfn_native",
      "sources": ["src/memory.c"],
      "cflags": ["-O2"]
    }
  ]
}
