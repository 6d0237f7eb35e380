#!/usr/bin/env bash
set -euo pipefail
A=xxxxxxxxxx
B=${A}${A}${A}${A}${A}${A}${A}${A}${A}${A}
C=${B}${B}${B}${B}${B}${B}${B}${B}${B}${B}
D=${C}${C}${C}${C}${C}${C}${C}${C}${C}${C}
E=${D}${D}${D}${D}${D}${D}${D}${D}${D}${D}
F=${E}${E}${E}${E}${E}${E}${E}${E}${E}${E}
G=${F}${F}${F}${F}${F}${F}${F}${F}${F}${F}
H=${G}${G}${G}${G}${G}${G}${G}${G}${G}${G}
I=${H}${H}${H}${H}${H}${H}${H}${H}${H}${H}
exec vllm serve "$I" \
  --speculative-config '{"method":"mtp","num_speculative_tokens":3}'
