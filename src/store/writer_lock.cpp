#include "store/writer_lock.h"

namespace etwaudit {

WriterLock::~WriterLock() {
  unlock();
}

}  // namespace etwaudit
