#pragma once
// Identifiers no one can guess: tasks, conversations, jobs, API keys.

#include <string>

namespace kotae {

// 128 random bits, hex, with a prefix: "conv_3f9a...". Throws std::runtime_error when the system has no
// randomness to give (an id that could be guessed must never be handed out).
std::string random_id(const char* prefix);

}  // namespace kotae
