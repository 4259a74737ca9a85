// JSON codec: writer and bounds-checked reader.
#ifndef TESSERA_JSON_H_
#define TESSERA_JSON_H_

#include "tessera/json_reader.h"
#include "tessera/json_writer.h"

#endif  // TESSERA_JSON_H_
