#pragma once
// Where Kotae keeps its data: --data DIR, else $KOTAE_DATA, else $XDG_DATA_HOME/kotae, else
// ~/.local/share/kotae. Models live in DATA/models/NAME (see ARCHITECTURE.md).

#include <filesystem>
#include <string>

namespace kotae {

std::filesystem::path default_data_dir();
inline std::filesystem::path models_dir(const std::filesystem::path& data_dir) { return data_dir / "models"; }

// The embedding model used when none is named.
inline constexpr const char* kDefaultEmbeddingModel = "all-minilm-l6-v2";

}  // namespace kotae
