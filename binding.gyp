{
  "targets": [
    {
      "target_name": "probelet_spawn",
      "sources": ["native/spawn.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "conditions": [["OS!='linux'", {"type": "none"}]]
    }
  ]
}
