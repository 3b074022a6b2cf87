// Ferry in KDE's Share menu (KF5 Purpose): a thin shim over Ferry's D-Bus interface. The job
// hands what it was given to Ferry's Share method, which D-Bus starts the service for, and
// finishes when Ferry answers with the new share's id, that is once the files are copied into
// Ferry's spool. Ferry then opens its share dialog, as for "Open With"; the delivery is Ferry's
// business, not the job's. No logic of Ferry's lives here: Ferry reads the files' types, checks
// every item and refuses a bad one with a sentence the job passes on as its error text.
//
// Purpose offers the plugin where Ferry's desktop file is installed (the "application:"
// constraint), whether the service runs or not: its "dbus:" constraint matches running services
// only, and Ferry's service runs only while it has work.

#include <KIO/StatJob>
#include <KPluginFactory>
#include <KProtocolInfo>
#include <QDBusConnection>
#include <QDBusError>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDir>
#include <QJsonArray>
#include <QStringList>
#include <QTimer>
#include <QVariantMap>
#include <climits>
#include <purpose/pluginbase.h>

namespace
{
const QString ferryService = QStringLiteral("io.github.ferryshare.Ferry");
const QString ferryPath = QStringLiteral("/io/github/ferryshare/Ferry");
const QString ferryInterface = QStringLiteral("io.github.ferryshare.Ferry.Share1");

// What an item of Purpose's "urls" is. Applications put files there (Spectacle, Okular, Gwenview,
// Dolphin: file:, or any KIO URL), and a browser its page's address, or the text a page shares
// through navigator.share, whatever Purpose type it asks for and with a "mimeType" in both cases.
enum class Item { File, KioUrl, Text };

Item kindOf(const QString &item, const QUrl &url)
{
    if (url.isLocalFile()) {
        return Item::File;
    }
    const QString scheme = url.scheme();
    if (scheme.isEmpty() || scheme == QLatin1String("http") || scheme == QLatin1String("https")) {
        return Item::Text;
    }
    // A URL is "scheme:/…" (trash:/0-a.png, smb://host/…); "Help: high water at 14:05" is text,
    // although KIO has a help: protocol.
    if (!item.startsWith(scheme + QStringLiteral(":/"), Qt::CaseInsensitive) || !KProtocolInfo::isKnownProtocol(scheme)) {
        return Item::Text;
    }
    return Item::KioUrl;
}
}

class FerryJob : public Purpose::Job
{
    Q_OBJECT
public:
    explicit FerryJob(QObject *parent)
        : Purpose::Job(parent)
    {
    }

    void start() override
    {
        for (const QJsonValue &item : data().value(QStringLiteral("urls")).toArray()) {
            m_items << item.toString();
        }
        // Finishing inside start() would report the result before the caller has connected to it.
        QTimer::singleShot(0, this, &FerryJob::next);
    }

private:
    // The items in order: text as text; files as URIs, each KIO-only URL (desktop:/, trash:/,
    // recentlyused:/, which Ferry cannot read: it reads through GIO) first asked of KIO for the
    // local file it stands for. Then the share.
    void next()
    {
        while (m_next < m_items.size()) {
            const QString item = m_items.at(m_next++);
            // A bare absolute path is a file too.
            const QUrl url = QDir::isAbsolutePath(item) ? QUrl::fromLocalFile(item) : QUrl(item);
            switch (kindOf(item, url)) {
            case Item::Text:
                m_texts << item;
                continue;
            case Item::File:
                m_uris << url.toString(QUrl::FullyEncoded);
                continue;
            case Item::KioUrl:
                KIO::StatJob *stat = KIO::mostLocalUrl(url, KIO::HideProgressInfo);
                connect(stat, &KJob::result, this, [this, url, stat] {
                    // Not resolved: the URL as it is (smb:, sftp: and the like Ferry reads itself).
                    m_uris << (stat->error() ? url : stat->mostLocalUrl()).toString(QUrl::FullyEncoded);
                    next();
                });
                return;
            }
        }
        share();
    }

    void share()
    {
        QVariantMap intent;
        if (!m_uris.isEmpty()) {
            intent.insert(QStringLiteral("uris"), m_uris);
        }
        if (!m_texts.isEmpty()) {
            // A page's link, a link share in Ferry; with files, the message that goes with them.
            const QString text = m_texts.join(QLatin1Char('\n'));
            intent.insert(QStringLiteral("text"), text);
            const QString title = data().value(QStringLiteral("title")).toString();
            if (!title.isEmpty() && title != text) {
                intent.insert(QStringLiteral("subject"), title);
            }
        }
        QDBusConnection bus = QDBusConnection::sessionBus();
        if (!bus.isConnected()) {
            // No bus to call on: no reply would ever come, so the job would never finish.
            fail(bus.lastError());
            return;
        }
        QDBusMessage call = QDBusMessage::createMethodCall(ferryService, ferryPath, ferryInterface, QStringLiteral("Share"));
        call << intent;
        // Share answers once every file is in Ferry's spool, which for a large file on a slow
        // network mount takes as long as copying it: no timeout but the person's patience.
        auto *watcher = new QDBusPendingCallWatcher(bus.asyncCall(call, INT_MAX), this);
        connect(watcher, &QDBusPendingCallWatcher::finished, this, [this](QDBusPendingCallWatcher *finished) {
            finished->deleteLater();
            const QDBusPendingReply<QString> reply = *finished;
            if (reply.isError()) {
                fail(reply.error());
            } else {
                // "url" is what an Export job must give back (a link to what it uploaded); a share
                // has none until it is delivered, so it is empty, as for other messengers.
                setOutput({{QStringLiteral("url"), QString()}, {QStringLiteral("ferryShareId"), reply.value()}});
                emitResult();
            }
        });
    }

    // Ferry's sentence, or the error's name when it came without one.
    void fail(const QDBusError &error)
    {
        setError(KJob::UserDefinedError);
        setErrorText(error.message().isEmpty() ? error.name() : error.message());
        setOutput({{QStringLiteral("url"), QString()}});
        emitResult();
    }

    QStringList m_items;
    int m_next = 0;
    QStringList m_uris;
    QStringList m_texts;
};

class FerryPlugin : public Purpose::PluginBase
{
    Q_OBJECT
public:
    FerryPlugin(QObject *parent, const QVariantList &)
        : Purpose::PluginBase(parent)
    {
    }

    Purpose::Job *createJob() const override
    {
        return new FerryJob(nullptr);
    }
};

K_PLUGIN_CLASS_WITH_JSON(FerryPlugin, "ferryplugin.json")

#include "ferryplugin.moc"
