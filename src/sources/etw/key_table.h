#pragma once
// KeyTable: a map from 64-bit kernel values (FileKey, FileObject, thread and
// process ids) to 32-bit ids, for the decoder's hot path.
//
// Files are opened and closed all the time, so the decoder adds and removes a
// FileObject entry for almost every open. A node-based map would allocate on
// each of those; this one is a single array of slots (open addressing with
// linear probing) that allocates only when it grows past its high-water mark,
// at most three quarters full. Removal shifts the following entries of the
// probe run back instead of leaving tombstones, so lookups stay short however
// long the table lives. The all-ones value marks an empty slot and cannot be a
// key: it is never a valid pointer, pid or tid.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etwaudit {

class KeyTable {
 public:
  // The one value that cannot be stored: set() ignores it, find() never finds it.
  static constexpr std::uint64_t no_key = ~std::uint64_t{0};

  // The value stored for key, or nullptr.
  const std::uint32_t* find(std::uint64_t key) const noexcept {
    if (m_slots.empty() || key == no_key) return nullptr;
    for (std::size_t index = home(key);; index = (index + 1) & mask()) {
      const Slot& slot = m_slots[index];
      if (slot.key == key) return &slot.value;
      if (slot.key == no_key) return nullptr;
    }
  }

  // Stores value for key, replacing what was there. Allocates only when the
  // table grows.
  void set(std::uint64_t key, std::uint32_t value) {
    if (key == no_key) return;
    if ((m_count + 1) * 4 > m_slots.size() * 3) grow();
    for (std::size_t index = home(key);; index = (index + 1) & mask()) {
      Slot& slot = m_slots[index];
      if (slot.key == key) {
        slot.value = value;
        return;
      }
      if (slot.key == no_key) {
        slot = Slot{key, value};
        ++m_count;
        return;
      }
    }
  }

  // Removes key; false when it was not there. Never allocates.
  bool erase(std::uint64_t key) noexcept {
    if (m_slots.empty() || key == no_key) return false;
    std::size_t hole = home(key);
    while (m_slots[hole].key != key) {
      if (m_slots[hole].key == no_key) return false;
      hole = (hole + 1) & mask();
    }
    // Move back every later entry of the run that may live in the hole: one
    // whose home is not cyclically within (hole, index].
    for (std::size_t index = (hole + 1) & mask(); m_slots[index].key != no_key; index = (index + 1) & mask()) {
      const std::size_t wanted = home(m_slots[index].key);
      const bool stays = hole <= index ? (hole < wanted && wanted <= index) : (hole < wanted || wanted <= index);
      if (stays) continue;
      m_slots[hole] = m_slots[index];
      hole = index;
    }
    m_slots[hole] = Slot{};
    --m_count;
    return true;
  }

  std::size_t size() const noexcept { return m_count; }
  // Slots allocated: the table allocates again only when size() passes three quarters of it.
  std::size_t capacity() const noexcept { return m_slots.size(); }

 private:
  struct Slot {
    std::uint64_t key = no_key;  // no_key when the slot is empty
    std::uint32_t value = 0;     // what key maps to
  };

  std::size_t mask() const noexcept { return m_slots.size() - 1; }

  // Kernel pointers share their low and high bits, so mix every bit into the
  // index (the finalizer of splitmix64).
  std::size_t home(std::uint64_t key) const noexcept {
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebull;
    key ^= key >> 31;
    return static_cast<std::size_t>(key) & mask();
  }

  void grow() {
    std::vector<Slot> old(m_slots.empty() ? 64 : m_slots.size() * 2);
    old.swap(m_slots);
    m_count = 0;
    for (const Slot& slot : old) {
      if (slot.key != no_key) set(slot.key, slot.value);
    }
  }

  std::vector<Slot> m_slots;  // a power of two in size once anything is stored
  std::size_t m_count = 0;    // slots in use
};

}  // namespace etwaudit
