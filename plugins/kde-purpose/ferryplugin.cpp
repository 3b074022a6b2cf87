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

#include <KPluginFactory>
#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QJsonArray>
#include <QStringList>
#include <QVariantMap>
#include <climits>
#include <purpose/pluginbase.h>

namespace
{
const QString ferryService = QStringLiteral("io.github.ferryshare.Ferry");
const QString ferryPath = QStringLiteral("/io/github/ferryshare/Ferry");
const QString ferryInterface = QStringLiteral("io.github.ferryshare.Ferry.Share1");

// The intent for Ferry's Share. An "Export" (Spectacle, Okular, Gwenview, Dolphin, Kate) always
// carries "mimeType" with its files' URLs, which Ferry copies (local files and any GVfs scheme).
// A "ShareUrl" (a browser's page) carries "urls" and "title" only: those are links, so they go as
// text, a link share when there is one, with the title as its subject.
QVariantMap intentFor(const QJsonObject &data)
{
    QStringList urls;
    for (const QJsonValue &url : data.value(QStringLiteral("urls")).toArray()) {
        urls << url.toString();
    }
    QVariantMap intent;
    if (data.contains(QStringLiteral("mimeType"))) {
        intent.insert(QStringLiteral("uris"), urls);
    } else {
        intent.insert(QStringLiteral("text"), urls.join(QLatin1Char('\n')));
        const QString title = data.value(QStringLiteral("title")).toString();
        if (!title.isEmpty()) {
            intent.insert(QStringLiteral("subject"), title);
        }
    }
    return intent;
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
        QDBusMessage call = QDBusMessage::createMethodCall(ferryService, ferryPath, ferryInterface, QStringLiteral("Share"));
        call << intentFor(data());
        // Share answers once every file is in Ferry's spool, which for a large file on a slow
        // network mount takes as long as copying it: no timeout but the person's patience.
        const QDBusPendingCall pending = QDBusConnection::sessionBus().asyncCall(call, INT_MAX);
        auto *watcher = new QDBusPendingCallWatcher(pending, this);
        connect(watcher, &QDBusPendingCallWatcher::finished, this, [this](QDBusPendingCallWatcher *finished) {
            finished->deleteLater();
            const QDBusPendingReply<QString> reply = *finished;
            if (reply.isError()) {
                setError(KJob::UserDefinedError);
                setErrorText(reply.error().message());
                setOutput({{QStringLiteral("url"), QString()}});
            } else {
                // "url" is what an Export job must give back (a link to what it uploaded); a
                // share has none until it is delivered, so it is empty, as for other messengers.
                setOutput({{QStringLiteral("url"), QString()}, {QStringLiteral("ferryShareId"), reply.value()}});
            }
            emitResult();
        });
    }
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
