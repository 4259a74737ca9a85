// MessagePack codec: writer and bounds-checked reader.
#ifndef TESSERA_MSGPACK_H_
#define TESSERA_MSGPACK_H_

#include "tessera/msgpack_reader.h"
#include "tessera/msgpack_writer.h"

#endif  // TESSERA_MSGPACK_H_
