// The mapping of the document model (value.h): nlohmann's ordered_map, keys in insertion order,
// but grown by moving its values instead of copying them.
//
// Why: ordered_map is a std::vector of std::pair<const std::string, Value>. The pair's move
// constructor copies its const key and so may throw, and a vector that outgrows its storage
// copies such elements, for the strong guarantee: every time a mapping grew, every value already
// in it was copied whole, subtree and all, and the old one freed. On a realistic plan of 256
// nodes that was 18% of the plan stage's instructions, the mappings of every normalized
// configuration, every result and every capture (bench/HISTORY.md, "the realistic plan's CPU").
// Here a mapping about to grow moves its elements into the larger storage itself: each key is
// copied (a string), each value moved (a pointer). The order, the lookups and every other member
// are nlohmann's.
#pragma once

#include <nlohmann/ordered_map.hpp>

#include <functional>
#include <memory>
#include <utility>

namespace ichor::doc {

template <class Key, class T, class IgnoredLess = std::less<Key>,
          class Allocator = std::allocator<std::pair<const Key, T>>>
struct ordered_map : nlohmann::ordered_map<Key, T, IgnoredLess, Allocator> {
    using Base = nlohmann::ordered_map<Key, T, IgnoredLess, Allocator>;
    using Container = typename Base::Container;
    using key_type = typename Base::key_type;
    using value_type = typename Base::value_type;
    using iterator = typename Base::iterator;
    using key_compare = typename Base::key_compare;

    using Base::Base;
    using Base::operator[];

    std::pair<iterator, bool> emplace(const key_type& key, T&& t) {
        if (auto it = Base::find(key); it != this->end()) {
            return {it, false};
        }
        make_room();
        Container::emplace_back(key, std::forward<T>(t));
        return {std::prev(this->end()), true};
    }

    template <class KeyType,
              nlohmann::detail::enable_if_t<
                  nlohmann::detail::is_usable_as_key_type<key_compare, key_type, KeyType>::value,
                  int> = 0>
    std::pair<iterator, bool> emplace(KeyType&& key, T&& t) {
        if (auto it = Base::find(key); it != this->end()) {
            return {it, false};
        }
        make_room();
        Container::emplace_back(std::forward<KeyType>(key), std::forward<T>(t));
        return {std::prev(this->end()), true};
    }

    T& operator[](const key_type& key) { return emplace(key, T{}).first->second; }

    template <class KeyType,
              nlohmann::detail::enable_if_t<
                  nlohmann::detail::is_usable_as_key_type<key_compare, key_type, KeyType>::value,
                  int> = 0>
    T& operator[](KeyType&& key) {
        return emplace(std::forward<KeyType>(key), T{}).first->second;
    }

    std::pair<iterator, bool> insert(value_type&& value) {
        return emplace(value.first, std::move(value.second));
    }

    std::pair<iterator, bool> insert(const value_type& value) {
        if (auto it = Base::find(value.first); it != this->end()) {
            return {it, false};
        }
        make_room();
        Container::push_back(value);
        return {std::prev(this->end()), true};
    }

    template <typename InputIt, typename = typename Base::template require_input_iter<InputIt>>
    void insert(InputIt first, InputIt last) {
        for (auto it = first; it != last; ++it) {
            insert(*it);
        }
    }

  private:
    // Room for one more element, the values moved (not copied) when the storage grows. Not the
    // strong guarantee of the vector's own growth: a key's copy that fails (memory exhausted)
    // leaves the values before it moved out, and the document is then lost with the run.
    void make_room() {
        if (this->size() < this->capacity()) {
            return;
        }
        Container grown(this->get_allocator());
        grown.reserve(this->capacity() == 0 ? 1 : this->capacity() * 2);
        for (auto& e : static_cast<Container&>(*this)) {
            grown.emplace_back(e.first, std::move(e.second));
        }
        static_cast<Container&>(*this).swap(grown);
    }
};

} // namespace ichor::doc
