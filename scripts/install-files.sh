#!/usr/bin/env bash
# Installs (or lists, or removes) the files named in data/install-files.list.
#
#   scripts/install-files.sh --prefix PREFIX [--destdir DIR] --bin-dir DIR   install
#   scripts/install-files.sh --prefix PREFIX --list [--kinds]                print destinations
#                                                        (--kinds: each after its kind, as in the list)
#   scripts/install-files.sh --prefix PREFIX [--destdir DIR] --uninstall     remove them
#
# --prefix is where Ferry will run from: @BINDIR@ in templates becomes PREFIX/bin.
# --destdir is a staging root (packaging): files go to DESTDIR/PREFIX/…, paths inside them
# do not mention it. --bin-dir is where the built executables are (`swift build --show-bin-path`);
# the shell completions are printed by the ferry built there.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
manifest="$root/data/install-files.list"
prefix= destdir= bin_dir= mode=install kinds=false

usage() { sed -n '2,10s/^# \{0,1\}//p' "$0" >&2; exit 64; }
while (($#)); do
    case $1 in
        --prefix) prefix=${2:?}; shift 2 ;;
        --destdir) destdir=${2-}; shift 2 ;;
        --bin-dir) bin_dir=${2:?}; shift 2 ;;
        --list) mode=list; shift ;;
        --kinds) kinds=true; shift ;;
        --uninstall) mode=uninstall; shift ;;
        *) usage ;;
    esac
done
[[ -n $prefix ]] || usage
[[ $prefix == /* ]] || { echo "install-files: --prefix must be an absolute path: $prefix" >&2; exit 64; }
prefix=${prefix%/}

# A directory from dbus-1.pc, made relative to dbus-1's own prefix so that it can go under ours;
# the freedesktop default when pkg-config or dbus-1.pc is missing.
dbus_dir() {
    local dir pc_prefix
    dir=$(pkg-config --variable="$1" dbus-1 2>/dev/null) || dir=
    pc_prefix=$(pkg-config --variable=prefix dbus-1 2>/dev/null) || pc_prefix=
    if [[ -n $dir && -n $pc_prefix && $dir == "$pc_prefix"/* ]]; then
        echo "${dir#"$pc_prefix"/}"
    else
        echo "$2"
    fi
}
dbus_services=$(dbus_dir session_bus_services_dir share/dbus-1/services)
dbus_interfaces=$(dbus_dir interfaces_dir share/dbus-1/interfaces)
# Qt 5's plugin directory as Debian's Qt has it (lib/<multiarch>/qt5/plugins), under any prefix.
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || true)
qt5_plugins=lib/${multiarch:+$multiarch/}qt5/plugins

# PREFIX=/usr is the distribution's own place (the Debian package): there, the directories its
# systemd and zsh look in; elsewhere, the ones they search under any prefix (see the list).
if [[ $prefix == /usr ]]; then
    systemd_user_units=$(pkg-config --variable=systemduserunitdir systemd 2>/dev/null) || systemd_user_units=
    systemd_user_units=${systemd_user_units:-/usr/lib/systemd/user}
    systemd_user_units=${systemd_user_units#/usr/}
    zsh_completions=share/zsh/vendor-completions
    # Autostart entries live in the system's XDG config directory, outside the prefix.
    xdg_autostart=/etc/xdg/autostart
else
    systemd_user_units=share/systemd/user
    zsh_completions=share/zsh/site-functions
    xdg_autostart=etc/xdg/autostart
fi

while read -r kind source dest file_mode; do
    [[ -z $kind || $kind == \#* ]] && continue
    dest=${dest//\{dbus-services\}/$dbus_services}
    dest=${dest//\{dbus-interfaces\}/$dbus_interfaces}
    dest=${dest//\{systemd-user-units\}/$systemd_user_units}
    dest=${dest//\{zsh-completions\}/$zsh_completions}
    dest=${dest//\{xdg-autostart\}/$xdg_autostart}
    dest=${dest//\{qt5-plugins\}/$qt5_plugins}
    # An absolute destination (the autostart directory under /etc) does not go under the prefix.
    [[ $dest == /* ]] && full=$dest || full="$prefix/$dest"
    target="$destdir$full"
    if [[ $kind == catalogues ]]; then
        langs=$(grep -v -e '^#' -e '^$' "$root/$source/LINGUAS")
    fi
    case $mode in
        list)
            label=
            $kinds && label="$kind "
            if [[ $kind == catalogues ]]; then for lang in $langs; do echo "$label${full//\{lang\}/$lang}"; done
            else echo "$label$full"; fi
            continue ;;
        uninstall)
            if [[ $kind == catalogues ]]; then for lang in $langs; do rm -f "$destdir${full//\{lang\}/$lang}"; done
            else rm -f "$target"; fi
            # A Python module (GNOME Files' extension) leaves its bytecode where it was imported from.
            if [[ $target == *.py ]]; then
                cache="$(dirname "$target")/__pycache__"
                rm -f "$cache/$(basename "${target%.py}")".*.pyc
                rmdir "$cache" 2>/dev/null || true
            fi
            continue ;;
    esac
    case $kind in
        program|completion)
            [[ -n $bin_dir ]] || { echo "install-files: --bin-dir is needed to install $dest" >&2; exit 64; } ;;
    esac
    # An optional part (the KDE plugin) whose build dependencies were missing: `make` said so.
    if [[ $kind == plugin && ! -f $root/$source ]]; then
        echo "  skipped $target ($source was not built)"
        continue
    fi
    [[ $kind == catalogues ]] || install -d "$(dirname "$target")"
    case $kind in
        program)
            [[ -x $bin_dir/$source ]] || { echo "install-files: $bin_dir/$source is not built" >&2; exit 66; }
            install -m "${file_mode:-0755}" "$bin_dir/$source" "$target" ;;
        template)
            sed "s|@BINDIR@|$prefix/bin|g" "$root/$source" > "$target.tmp"
            chmod "${file_mode:-0644}" "$target.tmp"
            mv "$target.tmp" "$target" ;;
        desktop)
            # A template whose Name, GenericName, Comment and Keywords get every translation in po/.
            sed "s|@BINDIR@|$prefix/bin|g" "$root/$source" > "$target.in.tmp"
            msgfmt --desktop --template="$target.in.tmp" -d "$root/po" -o "$target.tmp"
            rm -f "$target.in.tmp"
            chmod "${file_mode:-0644}" "$target.tmp"
            mv "$target.tmp" "$target" ;;
        metainfo)
            # AppStream's name, summary, description and captions in every language of po/.
            msgfmt --xml --template="$root/$source" -d "$root/po" -o "$target.tmp"
            chmod "${file_mode:-0644}" "$target.tmp"
            mv "$target.tmp" "$target" ;;
        catalogues)
            # po/LANG.po → PREFIX/share/locale/LANG/LC_MESSAGES/ferry.mo for each language in po/LINGUAS;
            # the destination names the .mo file with LANG in place of {lang}.
            while read -r lang; do
                [[ -z $lang || $lang == \#* ]] && continue
                mo="$destdir${full//\{lang\}/$lang}"
                install -d "$(dirname "$mo")"
                msgfmt --check -o "$mo.tmp" "$root/$source/$lang.po"
                chmod "${file_mode:-0644}" "$mo.tmp"
                mv "$mo.tmp" "$mo"
                echo "  installed $mo"
            done < "$root/$source/LINGUAS"
            continue ;;
        file|plugin)
            install -m "${file_mode:-0644}" "$root/$source" "$target" ;;
        completion)
            [[ -x $bin_dir/ferry ]] || { echo "install-files: $bin_dir/ferry is not built" >&2; exit 66; }
            # Completion scripts are sourced, never run: no #! line (bash's starts with one).
            "$bin_dir/ferry" --generate-completion-script "$source" | sed '1{/^#!/d}' > "$target.tmp"
            [[ -s $target.tmp ]] || { echo "install-files: no $source completion from ferry" >&2; exit 70; }
            chmod "${file_mode:-0644}" "$target.tmp"
            mv "$target.tmp" "$target" ;;
        *)
            echo "install-files: $manifest: unknown kind '$kind'" >&2; exit 70 ;;
    esac
    echo "  installed $target"
done < "$manifest"
