{
  "targets": [
    {
      "target_name": "sendfile",
      "sources": ["sendfile.c"],
      "cflags": ["-Wall", "-Wextra", "-O2"]
    }
  ]
}
