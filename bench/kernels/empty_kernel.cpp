// The empty kernel the launch benchmarks time: it does nothing, so what is
// measured is the cost of getting a launch to a worker and back.
#include "tessera/cpu_kernel.h"

TESSERA_CPU_KERNEL(empty) { (void)ctx; }
