// A view of contiguous elements: the subset of std::span the engine's interfaces use. CUDA
// sources are C++17 (no <span>); C++20 callers pass a std::span, a vector or an array, which
// convert implicitly.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace strider::engine::cuda {

template <class T>
class Span {
 public:
  constexpr Span() = default;
  constexpr Span(T* data, std::size_t size) : data_(data), size_(size) {}
  template <class C, class = std::enable_if_t<
                         std::is_convertible_v<decltype(std::declval<C&>().data()), T*>>>
  constexpr Span(C&& c) : data_(c.data()), size_(c.size()) {}  // NOLINT: implicit like std::span

  constexpr T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](std::size_t i) const { return data_[i]; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace strider::engine::cuda
