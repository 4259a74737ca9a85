// The tessera C++ guest SDK: include this one header in a shard module.
// Naming: the SDK's functions are lowercase, like the standard library's
// that guest code calls beside them; types are PascalCase.
#ifndef TESSERA_SHARD_SDK_H_
#define TESSERA_SHARD_SDK_H_

#include "tessera/abi.h"
#include "tessera/calls.h"
#include "tessera/codec.h"
#include "tessera/decode.h"
#include "tessera/encode.h"
#include "tessera/export.h"
#include "tessera/fields.h"
#include "tessera/finish.h"
#include "tessera/input.h"
#include "tessera/interest.h"
#include "tessera/interest_export.h"
#include "tessera/json.h"
#include "tessera/log.h"
#include "tessera/messages.h"
#include "tessera/msgpack.h"
#include "tessera/replicated.h"
#include "tessera/result.h"
#include "tessera/rewind.h"
#include "tessera/shard.h"
#include "tessera/transfer.h"

#endif  // TESSERA_SHARD_SDK_H_
