# The folders of src/ and which other folders each one may use: the one declaration of the layering
# (ARCHITECTURE.md, "The folders"). Each line makes the static library ioprobe_FOLDER from
# src/FOLDER/*.cpp and links it to ioprobe_DEP for every DEP after USES; `ioprobe_lib` links them all.
#
# tools/check-layering (ctest `layering`) reads this file too: every `#include "DIR/..."` in
# src/FOLDER/ must name FOLDER itself or one of its USES, and the USES must not form a cycle.
# Keep one ioprobe_layer(...) per folder, bottom up (a folder only after the folders it uses).
# A new folder: add its line here; CMake refuses a src/ folder that has none.

# Level 0: no other folder.
ioprobe_layer(core)
# Level 1.
ioprobe_layer(stats      USES core)
ioprobe_layer(topology   USES core)
ioprobe_layer(dataset    USES core)
ioprobe_layer(comm       USES core)
ioprobe_layer(calibrate  USES core)
ioprobe_layer(trace      USES core)
ioprobe_layer(gpu        USES core)
# Level 2.
ioprobe_layer(engine     USES core topology)
# Level 3.
ioprobe_layer(loader     USES core dataset engine topology stats gpu)
ioprobe_layer(raw        USES core engine topology stats)
ioprobe_layer(checkpoint USES core engine topology)
ioprobe_layer(replay     USES core trace engine topology stats)
# Level 4.
ioprobe_layer(ingest     USES core loader engine topology)
ioprobe_layer(scaling    USES core raw topology)
# Level 5.
ioprobe_layer(tune       USES core dataset loader ingest stats topology)
ioprobe_layer(cluster    USES core stats comm loader ingest raw topology)
# Level 6.
ioprobe_layer(capacity   USES core dataset loader ingest tune topology cluster)
# Level 7.
ioprobe_layer(report     USES core topology engine stats loader ingest tune capacity raw checkpoint cluster scaling
                              trace replay)
# Level 8.
ioprobe_layer(cli        USES core topology dataset engine loader ingest tune capacity raw checkpoint report comm
                              cluster calibrate gpu scaling trace replay)
