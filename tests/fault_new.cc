// A replacement of the global operator new (every form, with the matching
// deletes) for one test program: malloc and free underneath, and, when
// armed, one allocation that throws instead. It reaches every allocation of
// the C++ code the program runs, SentencePiece's included, which is how
// tests/test_subwords_faults.c makes each entry point of src/subwords.cc
// throw at each of its allocations in turn. Throwing something other than
// std::bad_alloc from operator new breaks its contract on purpose: it stands
// for every other exception a library call might throw (std::length_error,
// std::system_error, ...), which the shim must stop at its boundary too.
//
// One kind of allocation is passed over (the next one fails instead): a
// protobuf message made by google::protobuf::Arena::CreateMaybeMessage, as
// SentencePiece's bundled protobuf-lite does for each piece of a model it
// parses and of a line it encodes. protobuf is not exception-safe there
// (RepeatedPtrField::Add has counted the element before it exists, and its
// destructor then frees garbage), so no caller could survive that failure;
// it is SentencePiece's to fix, not something the shim can stop.
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

extern "C" {
#include "fault_new.h"
}

namespace {

std::atomic<long> countdown{-1}; // allocations left before the failure; < 0: none armed
std::atomic<int> fault_kind{FAULT_BAD_ALLOC};
std::atomic<bool> fired{false};

// Whether `caller` (a return address) lies in protobuf's message maker.
bool in_message_maker(void *caller)
{
    Dl_info info;
    return dladdr(caller, &info) && info.dli_sname &&
           std::strstr(info.dli_sname, "CreateMaybeMessage");
}

// Counts one allocation (made by code returning to `caller`), and throws
// when it is the armed one.
void count_allocation(void *caller)
{
    long left = countdown.load();
    while (left > 0 && !countdown.compare_exchange_weak(left, left - 1)) {
    }
    if (left != 0 || in_message_maker(caller))
        return;
    long zero = 0;
    if (!countdown.compare_exchange_strong(zero, -1))
        return; // another thread's allocation took it
    fired = true;
    switch (fault_kind.load()) {
    case FAULT_STD_ERROR:
        throw std::length_error("injected by tests/fault_new.cc");
    case FAULT_NOT_STD:
        throw 42;
    default:
        throw std::bad_alloc();
    }
}

void *allocate(std::size_t n, void *caller)
{
    count_allocation(caller);
    void *p = std::malloc(n ? n : 1);
    if (!p)
        throw std::bad_alloc();
    return p;
}

void *allocate_aligned(std::size_t n, std::align_val_t a, void *caller)
{
    count_allocation(caller);
    std::size_t align = static_cast<std::size_t>(a);
    void *p = nullptr;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n ? n : 1))
        throw std::bad_alloc();
    return p;
}

// The nothrow forms fail with a null pointer, whatever was to be thrown.
template <typename F> void *or_null(F f) noexcept
{
    try {
        return f();
    } catch (...) {
        return nullptr;
    }
}

} // namespace

// LeakSanitizer's suppressions for this program: SentencePiece itself
// leaks when some of its allocations fail (a block of its lattice's free
// list, a protobuf string of the trainer's settings). Only stacks that pass
// through SentencePiece are left out: the shim's own allocations (the
// nmt_subwords it makes, its strings and vectors) are made outside it, and
// a leak of them is still reported.
extern "C" const char *__lsan_default_suppressions(void)
{
    return "leak:libsentencepiece.so\n";
}

extern "C" void fault_new_arm(long after, int kind)
{
    fired = false;
    fault_kind = kind;
    countdown = after;
}

extern "C" int fault_new_disarm(void)
{
    countdown = -1;
    return fired.load();
}

#define CALLER __builtin_return_address(0)
void *operator new(std::size_t n) { return allocate(n, CALLER); }
void *operator new[](std::size_t n) { return allocate(n, CALLER); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept
{
    void *caller = CALLER;
    return or_null([=] { return allocate(n, caller); });
}
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept
{
    void *caller = CALLER;
    return or_null([=] { return allocate(n, caller); });
}
void *operator new(std::size_t n, std::align_val_t a) { return allocate_aligned(n, a, CALLER); }
void *operator new[](std::size_t n, std::align_val_t a) { return allocate_aligned(n, a, CALLER); }
void *operator new(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
    void *caller = CALLER;
    return or_null([=] { return allocate_aligned(n, a, caller); });
}
void *operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
    void *caller = CALLER;
    return or_null([=] { return allocate_aligned(n, a, caller); });
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }
