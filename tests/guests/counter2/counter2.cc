// Test guest "counter2": the counter (tests/guests/counter) whose inputs add
// ten times as much. Its state is the counter's, so a counter shard can be
// hot-reloaded to it and show the new behaviour at once.
#define COUNTER_ADD_FACTOR 10
#include "../counter/counter.cc"
